"""A client of a live server whose last_id is from a stream deleted since is told it did
not recover (the epoch itself: tests/unit/realtime/test_replay_epoch.py)."""
from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests import support
from tests.support import Listener, wait_until


def test_a_client_of_a_recreated_stream_is_told_it_did_not_recover(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["news"], limit=10)
    bus = Bus(redis)
    old = bus.publish("news.a", "old")
    redis.delete(STREAM)
    # At once: a stream made anew in the same millisecond goes on above the old ids
    # (tests/unit/stream/test_recreate_ids.py).
    bus.publish("news.a", "new")
    listener = Listener(live_server, support.issue_token("ann"), last_id=old)
    try:
        wait_until(lambda: listener.replays, message="replayed")
        assert listener.resets
        assert listener.replays[0]["recovered"] is False
    finally:
        listener.close()
