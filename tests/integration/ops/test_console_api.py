"""/readyz and /api/presence on a live web process: readiness follows the workers'
heartbeats, presence follows connections (the rest of the status API:
tests/unit/ops/test_console_api.py)."""
import requests

from app.users import accounts
from tests.support import Listener, LiveServer, wait_until
from tests.unit.ops.test_console_api import beat


def test_readyz_fails_while_a_required_role_has_no_live_heartbeat(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path, READY_REQUIRES="archiver")
    server.start()
    try:
        reply = requests.get(server.url + "/readyz", timeout=5)
        assert reply.status_code == 503
        assert reply.json()["reason"] == "no archiver has ever sent a heartbeat"
        beat(redis, "archiver", "a:1", 0)
        assert requests.get(server.url + "/readyz", timeout=5).status_code == 200
        beat(redis, "archiver", "a:1", 30)  # its beats stopped
        reply = requests.get(server.url + "/readyz", timeout=5)
        assert reply.status_code == 503 and reply.json()["missing"] == ["archiver"]
        assert "no archiver is alive: the last heartbeat (a:1) was 30 s ago" in reply.json()["reason"]
    finally:
        server.stop()


def test_presence_follows_connections_and_watchers_hear_joins_and_leaves(redis_server, redis,
                                                                         tmp_path, admin):
    """Presence events are for admins (ada here); carol is a plain user."""
    user = admin
    accounts.create_user(redis, "carol", "carol-password-1")
    server = LiveServer(redis_server.url, tmp_path)
    server.start()
    listeners = []
    try:
        token = server.token(*user)
        watcher = Listener(server, token)
        listeners.append(watcher)
        events = []
        watcher.sio.on("presence", events.append, namespace="/notifications")
        assert watcher.call("presence", {"watch": "yes"})["ok"] is False
        wait_until(lambda: online(server, token) == [user[0]], timeout=10, message="the watcher online")
        ack = watcher.call("presence", {"watch": True})
        assert ack["ok"] and [p["user"] for p in ack["online"]] == [user[0]]
        carol = Listener(server, server.token("carol", "carol-password-1"))
        listeners.append(carol)
        refused = carol.call("presence", {"watch": True})
        assert refused["ok"] is False and "for admins" in refused["error"]
        wait_until(lambda: [(e["user"], e["online"]) for e in events] == [("carol", True)], timeout=10,
                   message="carol joining")
        assert online(server, token) == sorted(["carol", user[0]])
        carol.close()
        listeners.remove(carol)
        wait_until(lambda: [(e["user"], e["online"]) for e in events] == [("carol", True), ("carol", False)],
                   timeout=10, message="carol leaving")
        assert online(server, token) == [user[0]]
    finally:
        for listener in listeners:
            listener.close()
        server.stop()


def online(server, token):
    reply = requests.get(server.url + "/api/presence", headers={"Authorization": f"Bearer {token}"},
                         timeout=5)
    return [p["user"] for p in reply.json()["online"]]
