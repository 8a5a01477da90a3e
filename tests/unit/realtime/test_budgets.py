"""What one connection may ask of a web process: its message budget, and coalesced reads."""

import gevent

from app.realtime.read_marks import ReadMarks
from app.realtime.token_bucket import TokenBucket
from app.stream.publish import Bus
from app.users import read_state


def test_a_bucket_allows_its_burst_then_its_rate():
    now = [100.0]
    bucket = TokenBucket(rate=10, burst=3, clock=lambda: now[0])
    assert [bucket.take(lambda: now[0]) for _ in range(4)] == [True, True, True, False]
    now[0] += 0.15  # one and a half tokens back
    assert bucket.take(lambda: now[0]) and not bucket.take(lambda: now[0])
    now[0] += 60  # never more than the burst saved up
    assert sum(bucket.take(lambda: now[0]) for _ in range(10)) == 3


def test_reads_that_arrive_together_are_one_transaction(redis):
    coalescer = ReadMarks(redis, gevent.spawn, gevent.event.Event)
    bus = Bus(redis)
    ids = [bus.publish("t", f"n{i}", user="ann") for i in range(20)]
    acks = [gevent.spawn(coalescer.mark, "ann", {"ids": [entry_id]}) for entry_id in ids]
    gevent.joinall(acks, timeout=10)
    assert coalescer.transactions == 1
    assert all(sorted(ack.value["ids"]) == sorted(ids) for ack in acks)
    assert read_state.get(redis, "ann")["ids"] == ids
    bad = gevent.spawn(coalescer.mark, "ann", {"ids": "nope"})
    bad.join(5)
    assert isinstance(bad.exception, read_state.ReadStateError)
