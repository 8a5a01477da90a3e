"""``/client/*`` (the browser client, for any origin) and cross-origin API calls."""
import pytest

from app import create_app
from app.settings import TestConfig

OTHER = "http://board.example:5001"


@pytest.mark.parametrize("name, marker", [("herald.js", b"Herald.connect"),
                                          ("socket.io.js", b"socket.io"),
                                          ("idiomorph.js", b"var Idiomorph=")])
def test_the_client_is_served_for_pages_on_any_origin(client, name, marker):
    reply = client.get(f"/client/{name}")
    assert reply.status_code == 200 and marker in reply.data
    assert reply.mimetype == "text/javascript"
    # Every other Herald response is same-origin; these are public code.
    assert reply.headers["Cross-Origin-Resource-Policy"] == "cross-origin"
    assert reply.headers["Access-Control-Allow-Origin"] == "*"
    assert "max-age=300" in reply.headers["Cache-Control"]
    reply.close()
    assert client.get("/client/package.json").status_code == 404
    assert client.get("/").headers.get("Cross-Origin-Resource-Policy") in (None, "same-origin")


@pytest.fixture
def cross_origin_client(redis_server, redis):
    return create_app(TestConfig(redis_server.url, SOCKETIO_ORIGINS=[OTHER])).test_client()


def test_a_listed_origin_may_read_the_feed_with_a_token(cross_origin_client):
    preflight = cross_origin_client.options(
        "/api/notifications", headers={"Origin": OTHER, "Access-Control-Request-Method": "GET",
                                       "Access-Control-Request-Headers": "authorization"})
    assert preflight.headers["Access-Control-Allow-Origin"] == OTHER
    assert "authorization" in preflight.headers["Access-Control-Allow-Headers"].lower()
    # Never with cookies: a page elsewhere speaks for its user with a token.
    assert "Access-Control-Allow-Credentials" not in preflight.headers
    reply = cross_origin_client.get("/api/notifications", headers={"Origin": OTHER})
    assert reply.status_code == 401 and reply.headers["Access-Control-Allow-Origin"] == OTHER


def test_other_origins_and_other_paths_get_no_cors(cross_origin_client, client):
    stranger = cross_origin_client.get("/api/notifications",
                                       headers={"Origin": "http://evil.example"})
    assert "Access-Control-Allow-Origin" not in stranger.headers
    digests = cross_origin_client.get("/api/digests", headers={"Origin": OTHER})
    assert "Access-Control-Allow-Origin" not in digests.headers
    # No SOCKETIO_ORIGINS: no cross-origin API at all.
    assert "Access-Control-Allow-Origin" not in client.get(
        "/api/notifications", headers={"Origin": OTHER}).headers


def test_a_listed_origin_may_read_the_answer_to_its_publish(cross_origin_client, redis):
    """The publish answered in front of Flask (app/web/api/fast_publish.py) for a key the
    process knows answers a browser on a listed origin as Flask's CORS does."""
    from app.users import accounts
    key = accounts.create_api_key(redis, "board-page")
    for attempt in range(2):  # the first remembers the key, the second takes the fast path
        reply = cross_origin_client.post(
            "/api/notifications", json={"topic": "board.cards", "title": f"moved {attempt}"},
            headers={"Origin": OTHER, "Authorization": f"Bearer {key}"})
        assert reply.status_code == 201
        assert reply.headers["Access-Control-Allow-Origin"] == OTHER
