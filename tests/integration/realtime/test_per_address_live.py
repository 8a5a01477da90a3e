"""MAX_SESSIONS_PER_ADDRESS behind TRUSTED_PROXIES, on a served Herald: the client's
address is the proxy's X-Forwarded-For normalised, so that one client cannot hold
more sessions by spelling its address differently (Socket.IO and event streams)."""
import requests
import socketio

from app.users import accounts
from tests.support import NAMESPACE, LiveServer, issue_token

SPELLINGS = ["9.9.9.9:1234", "::ffff:9.9.9.9", "009.9.9.9", "[::ffff:9.9.9.9]:443"]


def sse(server, forwarded):
    """The answer to opening an event stream from ``forwarded`` (its status, its body
    left unread; closed by the caller)."""
    return requests.get(server.url + "/api/stream", stream=True, timeout=(5, 10),
                        headers={"Accept": "text/event-stream", "X-Forwarded-For": forwarded,
                                 "Authorization": f"Bearer {issue_token('ann')}"})


def status(server, forwarded):
    with sse(server, forwarded) as answer:
        return answer.status_code


def socketio_refusal(server, forwarded):
    """The refusal's message, or None when the connect was accepted (then closed)."""
    reasons = []
    client = socketio.Client(reconnection=False)
    client.on("connect_error", reasons.append, namespace=NAMESPACE)
    try:
        client.connect(server.url, namespaces=[NAMESPACE], auth={"token": issue_token("ann")},
                       headers={"X-Forwarded-For": forwarded}, transports=["websocket"],
                       wait_timeout=5)
    except socketio.exceptions.ConnectionError:
        pass
    finally:
        client.disconnect()
    if not reasons:
        return None
    return reasons[0]["message"] if isinstance(reasons[0], dict) else str(reasons[0])


def test_every_spelling_of_an_address_counts_as_that_address(redis_server, redis, tmp_path):
    accounts.create_user(redis, "ann", "ann-password")
    server = LiveServer(redis_server.url, tmp_path, TRUSTED_PROXIES="1",
                        MAX_SESSIONS_PER_ADDRESS="1")
    server.start()
    try:
        held = sse(server, "9.9.9.9")
        try:
            assert held.status_code == 200
            for spelling in SPELLINGS:
                assert status(server, spelling) == 429, spelling
                assert "too many sessions from 9.9.9.9 " in socketio_refusal(server, spelling)
            assert status(server, "9.9.9.8") == 200
        finally:
            held.close()
    finally:
        server.stop()
