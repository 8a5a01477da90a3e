"""Presence while Redis is away (the server killed and started again): changes are kept
in the process and written once Redis is back. The rest of presence:
tests/unit/realtime/test_presence.py."""
import pytest

from app.realtime import presence
from app.realtime.presence import Presence
from app.redis_client import UNAVAILABLE
from tests.unit.realtime.test_presence import users


def test_changes_are_kept_while_redis_is_away(redis_server, redis):
    a = Presence(redis, "host-a:1")
    a.flush(now=100.0)
    a.opened("ada")
    redis_server.kill()
    try:
        with pytest.raises(UNAVAILABLE):
            a.flush(now=100.5)
        assert a.pending["ada"] == 1  # not lost: written on the next try
    finally:
        redis_server.start()
    client = redis_server.client()
    a.client = client
    a.script = client.register_script(presence._APPLY)
    a.flush(now=101.0)
    assert users(client) == {"ada": 1}
