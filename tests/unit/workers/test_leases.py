"""Leases (app/ops/leases.py) on the test's Redis, one Redis or a cluster alike: one holder
at a time, renewal, letting go only of one's own, the holder's own clock, item leases."""
from app.ops.leases import ItemLeases, Lease
from app.webhooks.layout import LEASE
from workers.archiver import LEASE_KEY as ARCHIVER_LEASE


def test_one_holder_at_a_time_and_a_new_one_once_it_lets_go(redis):
    for key in (LEASE, ARCHIVER_LEASE):
        clock = [100.0]
        first = Lease(redis, key, 10, "first", clock=lambda: clock[0])
        second = Lease(redis, key, 10, "second")
        assert first.keep() and first.held() and first.confirm()
        assert not second.keep() and not second.held()
        assert second.holder_now() == "first"
        assert 0 < redis.pttl(key) <= 10_000
        clock[0] += 10 * 0.8  # past the part of its TTL the holder trusts, by its own clock
        assert not first.held()
        second.release()  # not its own: nothing
        assert redis.get(key) == b"first"
        first.release()
        assert second.keep() and redis.get(key) == b"second"
        assert not first.keep()
        second.release()
        assert second.holder_now() is None


def test_item_leases(redis):
    mine, theirs = ItemLeases(redis, "herald:test-leases:", 5, "mine"), \
        ItemLeases(redis, "herald:test-leases:", 5, "theirs")
    assert mine.take("a") and not theirs.take("a") and theirs.take("b")
    theirs.release("a")  # not its own: kept
    assert not theirs.take("a")
    mine.release("a")
    assert theirs.take("a")
