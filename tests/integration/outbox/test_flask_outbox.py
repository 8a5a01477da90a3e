"""The Flask extension's outbox: ``herald.track`` with Flask-SQLAlchemy, the relay in the
web process, ``herald.cursor()``, and ``flask herald relay`` as a process of its own."""
import os
import signal
import subprocess
import sys

import pytest

from app.users import accounts, subscriptions
from herald_client import HeraldClient
from tests.helpers.keys import SECRET
from tests.integration.outbox.host_app import create_app
from tests.integration.outbox.support import hosts, stream
from tests.support import ROOT, Listener, LiveServer, wait_until


@pytest.fixture
def jwt_server(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path, JWT_SECRET=SECRET)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def api_key(redis):
    return accounts.create_api_key(redis, "host-app")


@pytest.fixture
def host(database_url):
    """``host(server, api_key, relay=True)``: the host app on ``database_url``, and its
    Herald extension (closed after)."""
    with hosts(create_app, database_url) as make:
        yield make


def test_a_commit_in_a_view_reaches_a_browser_live_as_data(host, jwt_server, redis, api_key):
    app, _herald = host(jwt_server, api_key)
    subscriptions.add(redis, "carol", ["shop"], limit=10)
    token = HeraldClient(jwt_server.url, jwt_secret=SECRET).connection_token("carol", ttl=60)
    listener = Listener(jwt_server, token)
    try:
        reply = app.test_client().post("/items", json={"name": "lamp"})
        assert reply.status_code == 201
        wait_until(lambda: listener.received, timeout=10, message="the data event")
        event = listener.received[0]
        assert (event["topic"], event["kind"], event["title"]) == ("shop.item.created", "data",
                                                                    "lamp created")
        assert event["data"]["id"] == reply.json["id"] and event["data"]["name"] == "lamp"
        # The page's cursor, read before its records, is the id of what was shipped last.
        wait_until(lambda: app.test_client().get("/page").json["cursor"] == event["id"],
                   timeout=5, message="the cursor")
    finally:
        listener.close()


def test_flask_herald_relay_once_ships_what_a_process_left(host, live_server, redis, api_key):
    app, _herald = host(live_server, api_key, relay=False)
    client = app.test_client()
    for name in ("chair", "desk"):
        client.post("/items", json={"name": name})
    assert stream(redis) == []  # this process does not relay
    assert client.get("/page").json["cursor"] is None
    result = app.test_cli_runner().invoke(args=["herald", "relay", "--once"])
    assert result.exit_code == 0, result.output
    assert "shipped 2 outbox rows" in result.output
    assert [e["data"]["name"] for e in stream(redis)] == ["chair", "desk"]


def test_flask_herald_relay_runs_as_a_process_of_its_own(database_url, live_server, redis,
                                                         api_key, tmp_path):
    """The host app commits and dies before shipping; `flask herald relay`, started
    later in another process, ships the rows, then stops cleanly on SIGTERM."""
    env = dict(os.environ, HOST_DATABASE_URL=database_url, HERALD_URL=live_server.url,
               HERALD_API_KEY=api_key, HERALD_OUTBOX_RELAY="0", PYTHONPATH=str(ROOT))
    committing = ("from tests.integration.outbox.host_app import create_app; "
                  "import os; app = create_app(); c = app.test_client(); "
                  "[c.post('/items', json={'name': n}) for n in ('one', 'two', 'three')]; "
                  "os._exit(0)")  # dies right after its commits, relaying nothing
    subprocess.run([sys.executable, "-c", committing], env=env, cwd=ROOT, check=True, timeout=60)
    assert stream(redis) == []
    log = open(tmp_path / "relay.log", "wb")
    relay = subprocess.Popen([sys.executable, "-m", "flask", "--app",
                              "tests.integration.outbox.host_app:create_app", "herald", "relay",
                              "--poll", "0.2"], env=env, cwd=ROOT, stdout=log,
                             stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: len(stream(redis)) == 3, timeout=30, message="the three rows")
        assert [e["data"]["name"] for e in stream(redis)] == ["one", "two", "three"]
        relay.send_signal(signal.SIGTERM)
        assert relay.wait(15) == 0
    finally:
        if relay.poll() is None:
            relay.kill()
            relay.wait(10)
        log.close()


def test_a_views_commit_is_shipped_by_its_own_thread_once_the_response_is_sent(
        host, live_server, redis, api_key):
    """No relay runs here: the request's thread publishes the commit's rows itself,
    after the response (so the view's answer is not held up, and no other thread
    waits for the GIL behind the view)."""
    app, herald = host(live_server, api_key)
    herald.outbox.auto_start = False  # no relay thread at all
    response = app.test_client().post("/items", json={"name": "kettle"})
    assert response.status_code == 201
    assert stream(redis) == []  # not before the response is sent and closed
    response.close()
    assert [e["data"]["name"] for e in stream(redis)] == ["kettle"]
    with app.app_context():
        assert herald.outbox.counts(app.extensions["host"]["db"].engine)["pending"] == 0
