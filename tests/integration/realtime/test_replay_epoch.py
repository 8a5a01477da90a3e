"""A client of a live server whose last_id is from a stream deleted since is told it did
not recover (the epoch itself: tests/unit/realtime/test_replay_epoch.py)."""
from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests import support
from tests.support import Listener, wait_until


def _redis_ms(redis):
    seconds, micros = redis.time()
    return seconds * 1000 + micros // 1000


def test_a_client_of_a_recreated_stream_is_told_it_did_not_recover(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["news"], limit=10)
    bus = Bus(redis)
    old = bus.publish("news.a", "old")
    redis.delete(STREAM)
    # A stream made anew in the same millisecond would start at the old id itself
    # (Redis's automatic ids): a test's artefact, not a deployment's.
    wait_until(lambda: _redis_ms(redis) > int(old.split("-")[0]), message="the next millisecond")
    bus.publish("news.a", "new")
    listener = Listener(live_server, support.issue_token("ann"), last_id=old)
    try:
        wait_until(lambda: listener.replays, message="replayed")
        assert listener.resets
        assert listener.replays[0]["recovered"] is False
    finally:
        listener.close()
