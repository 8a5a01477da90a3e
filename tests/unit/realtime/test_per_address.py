"""Sessions are counted per client address, Socket.IO and event streams alike, so that
an office behind one NAT is served while one host cannot hoard sessions (issue 23)."""
import pytest

from app import create_app
from app.realtime.per_address import SessionsPerAddress, TooMany
from app.services import of as of_app
from app.settings import TestConfig
from tests.unit.web.api.helpers import bearer


def test_counts_enter_and_leave_per_address():
    sessions = SessionsPerAddress(2)
    sessions.enter("10.0.0.1")
    sessions.enter("10.0.0.1")
    sessions.enter("10.0.0.2")
    with pytest.raises(TooMany, match="at most 2"):
        sessions.enter("10.0.0.1")
    sessions.leave("10.0.0.1")
    sessions.enter("10.0.0.1")
    assert sessions.open == {"10.0.0.1": 2, "10.0.0.2": 1} and sessions.refused == 1
    sessions.leave("10.0.0.2")
    assert "10.0.0.2" not in sessions.open  # nothing kept for an address with none open


def test_the_defaults_serve_an_office_and_count_sessions_not_sockets(app):
    assert app.config["MAX_SESSIONS_PER_ADDRESS"] == 3000
    # The socket cap is only the descriptor guard: above what an office's handshakes need.
    assert app.config["MAX_CONNECTIONS_PER_ADDRESS"] >= 3 * app.config["MAX_SESSIONS_PER_ADDRESS"]


def test_an_event_stream_past_the_limit_is_refused_and_a_closed_one_frees_its_place(
        redis_server, redis, user):
    app = create_app(TestConfig(redis_server.url, MAX_SESSIONS_PER_ADDRESS=1))
    client = app.test_client()
    first = client.get("/api/stream", headers=bearer(user[0]), buffered=False)
    assert first.status_code == 200
    second = client.get("/api/stream", headers=bearer(user[0]), buffered=False)
    assert second.status_code == 429 and "too many sessions" in second.get_json()["error"]
    first.close()
    third = client.get("/api/stream", headers=bearer(user[0]), buffered=False)
    assert third.status_code == 200
    third.close()
    assert of_app(app).bounds.sessions.open == {}


def test_a_socketio_connect_and_an_event_stream_share_one_count_per_address(
        redis_server, redis, user):
    """Both go through one lifecycle (app/realtime/lifecycle.py): one count, one limit."""
    import socketio

    app = create_app(TestConfig(redis_server.url, MAX_SESSIONS_PER_ADDRESS=1))
    stream = app.test_client().get("/api/stream", headers=bearer(user[0]), buffered=False)
    assert stream.status_code == 200
    namespace = of_app(app).namespace
    with pytest.raises(socketio.exceptions.ConnectionRefusedError, match="too many sessions"):
        namespace.on_connect("sid-1", {"REMOTE_ADDR": "127.0.0.1"}, {"token": user[0]})
    stream.close()
    assert of_app(app).bounds.sessions.open == {}
