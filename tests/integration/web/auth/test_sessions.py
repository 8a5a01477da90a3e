"""Sessions end on a live server too: revoking a user's tokens, or deleting the user, closes
their open Socket.IO connections (the rest: tests/unit/web/auth/test_sessions.py)."""
from app.users import accounts, subscriptions
from tests.support import Listener, wait_until


def test_revoking_and_deleting_close_open_connections(live_server, redis, runner):
    accounts.create_user(redis, "ann", "ann-password")
    accounts.create_user(redis, "ben", "ben-password")
    ann = Listener(live_server, live_server.token("ann", "ann-password"))
    ben = Listener(live_server, live_server.token("ben", "ben-password"))
    try:
        accounts.revoke_tokens(redis, "ann")
        wait_until(lambda: not ann.sio.connected, timeout=5, message="ann's connection closed")
        result = runner.invoke(args=["users", "delete", "ben", "--yes"])
        assert result.exit_code == 0 and "deleted user ben" in result.output
        wait_until(lambda: not ben.sio.connected, timeout=5, message="ben's connection closed")
        assert accounts.get_user(redis, "ben") is None
        assert not redis.exists(subscriptions.key("ben"))
        assert "ben" not in [u["name"] for u in accounts.list_users(redis)]
    finally:
        ann.close()
        ben.close()
