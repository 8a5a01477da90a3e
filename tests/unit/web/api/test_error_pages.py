"""Errors: pages answer a styled page in the app's frame (templates/error.html), the API
answers JSON (app/web/api/errors.py)."""
import html

import pytest

from app import create_app
from app.settings import TestConfig
from app.web.api.errors import PAGE_ERRORS
from tests.support import sign_in


def assert_error_page(reply, code, signed_in=False):
    assert reply.status_code == code
    assert reply.mimetype == "text/html"
    page = reply.get_data(as_text=True)
    heading, message = PAGE_ERRORS[code]
    assert f"<h1>{html.escape(heading, quote=True)}</h1>" in page
    assert html.escape(message, quote=True) in page
    assert '<a href="/">Back to your feed</a>' in page
    # The app's frame: its stylesheet, header and skip link, not the framework's bare page.
    assert 'href="/static/css/herald.css' in page and 'class="topbar"' in page
    assert 'class="skip"' in page and "Werkzeug" not in page
    assert ('aria-label="Pages"' in page) == signed_in  # the nav, for a signed-in user
    return page


def test_an_unknown_page_is_a_styled_404(client, redis):
    assert_error_page(client.get("/nonexistent"), 404)
    assert_error_page(client.get("/vendor/nothing.js"), 404)


def test_a_signed_in_user_gets_the_404_with_the_nav(client, user):
    sign_in(client, *user)
    assert_error_page(client.get("/no/such/page"), 404, signed_in=True)


@pytest.mark.parametrize("path", ["/jobs", "/digests"])
def test_an_admin_page_for_a_user_is_a_styled_403(client, user, path):
    sign_in(client, *user)
    page = assert_error_page(client.get(path), 403, signed_in=True)
    assert 'href="/jobs"' not in page  # the nav of a user, without the admins' pages


def test_an_admin_still_gets_the_admin_pages(client, admin):
    sign_in(client, *admin)
    assert client.get("/jobs").status_code == 200


def test_a_wrong_method_on_a_page_is_a_styled_405(client, redis):
    assert_error_page(client.delete("/login"), 405)


@pytest.mark.parametrize("path", ["/api/nonexistent", "/api/notifications/1-0/more"])
def test_the_api_answers_json_404(client, redis, path):
    reply = client.get(path)
    assert reply.status_code == 404 and reply.mimetype == "application/json"
    assert reply.get_json()["error"]


@pytest.fixture
def failing_app(redis_server, redis):
    """An app with a page and an API route that raise, answering as production does
    (TESTING would re-raise the exception into the test instead)."""
    app = create_app(TestConfig(redis_server.url))
    app.config["PROPAGATE_EXCEPTIONS"] = False

    @app.get("/boom")
    def boom():
        raise RuntimeError("a bug in a page")

    @app.get("/api/boom")
    def api_boom():
        raise RuntimeError("a bug in the API")
    return app


def test_an_exception_in_a_page_is_the_styled_500(failing_app, caplog):
    reply = failing_app.test_client().get("/boom")
    page = assert_error_page(reply, 500)
    assert "a bug in a page" not in page and "Traceback" not in page
    assert any("a bug in a page" in str(r.exc_info) for r in caplog.records if r.exc_info)


def test_an_exception_in_the_api_is_json_500(failing_app):
    reply = failing_app.test_client().get("/api/boom")
    assert reply.status_code == 500 and reply.mimetype == "application/json"
    assert reply.get_json() == {"error": "internal error; it has been logged"}
