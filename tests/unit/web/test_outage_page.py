"""Pages while Redis is unreachable: the outage page (503, Herald's frame, the status
banner showing, its retry script), logged as a warning, never a 500; at once,
without asking Redis, while this process's RedisWatch knows it is down."""
import logging
import threading

import pytest

from app import create_app
from app.services import of as of_app
from app.settings import TestConfig
from app.web.api.errors import OUTAGE
from tests.support import free_port, sign_in

PAGES = ["/", "/preferences", "/jobs", "/digests", "/webhooks", "/ops"]


def assert_outage_page(reply):
    assert reply.status_code == 503 and reply.mimetype == "text/html"
    assert reply.headers["Retry-After"] == "5"
    page = reply.get_data(as_text=True)
    assert f"<h1>{OUTAGE[0]}</h1>" in page
    assert 'id="status-banner"' in page and 'data-problem="outage"' in page
    assert "Herald cannot reach its database (Redis)." in page and "Retry now" in page
    assert 'src="/static/js/views/status-banner.js' in page  # it tries again by itself
    assert 'href="/static/css/status.css' in page and 'class="topbar"' in page
    assert "http-equiv" not in page  # no meta refresh
    return page


@pytest.fixture
def dead_app():
    """An app whose Redis is not there (nothing listens on its port)."""
    app = create_app(TestConfig(f"redis://127.0.0.1:{free_port()}/0"))
    app.config["PROPAGATE_EXCEPTIONS"] = False
    return app


@pytest.mark.parametrize("path", PAGES)
def test_a_signed_in_page_meeting_an_unreachable_redis_is_the_outage_page(dead_app, path, caplog):
    client = dead_app.test_client()
    with client.session_transaction() as session:
        session["user"], session["key"] = "ann", "k"
    with caplog.at_level(logging.WARNING):
        assert_outage_page(client.get(path))
    warnings = [r for r in caplog.records if "Redis is unreachable" in r.getMessage()]
    assert warnings and all(r.levelno == logging.WARNING and not r.exc_info for r in warnings)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_while_the_watch_knows_redis_is_down_pages_answer_without_asking_it(app, client, redis, admin):
    sign_in(client, *admin)
    of_app(app).relay.watch.down = True
    before = redis.info("commandstats")
    for path in PAGES:
        assert_outage_page(client.get(path))
    missing = client.get("/no/such/page")  # any other page: its frame without the nav
    assert missing.status_code == 404 and 'aria-label="Pages"' not in missing.get_data(as_text=True)
    after = redis.info("commandstats")
    asked = {name: after[name]["calls"] - before.get(name, {"calls": 0})["calls"]
             for name in after if name != "cmdstat_info"}
    assert not any(asked.values()), f"Redis was asked: {asked}"
    of_app(app).relay.watch.down = False
    assert client.get("/").status_code == 200


def test_an_api_call_meeting_an_outage_is_503_and_makes_the_watch_ping_at_once(dead_app):
    watch = of_app(dead_app).relay.watch
    watch._nudge = threading.Event()  # as run() makes it
    reply = dead_app.test_client().get("/api/notifications",
                                       headers={"Authorization": "Bearer hk_anything"})
    assert reply.status_code == 503 and "Redis is unreachable" in reply.get_json()["error"]
    assert watch._nudge.is_set()


def test_the_sign_in_page_needs_no_redis(dead_app):
    reply = dead_app.test_client().get("/login")
    assert reply.status_code == 200 and 'name="password"' in reply.get_data(as_text=True)
