"""The dispatcher's two steps on a Redis Cluster (dispatch.py): the fan-out in the webhooks'
slot, then the XACK in the stream's. A death between them queues nothing twice, and a
worker that lost its lease queues nothing: what it read is queued by the active one."""
from app.stream.publish import Bus
from app.stream.shards import configured
from app.webhooks import layout, store
from app.webhooks.dispatch import SWEEP_EVERY, Dispatcher
from tests.unit.webhooks.test_dispatch import drain, queued_ids


def endpoint(redis):
    return store.create(redis, {"url": "http://127.0.0.1:9/", "topics": ["*"]}, "test")["id"]


def pending(redis):
    """The group's pending entries, in every shard."""
    return sum(redis.xpending(shard.stream, store.GROUP)["pending"] for shard in configured())


def test_a_death_between_the_fan_out_and_the_xack_queues_nothing_twice(redis, allow_loopback):
    endpoint_id = endpoint(redis)
    bus, dying = Bus(redis), Dispatcher(redis)
    drain(dying)
    ids = [bus.publish("ops.a", f"n{i}") for i in range(3)]
    dying._acknowledge = lambda entry_ids: None  # it dies before its XACK
    dying.step(block_ms=10)
    assert queued_ids(redis, endpoint_id) == ids and pending(redis) == 3
    assert redis.zcard(layout.DISPATCHED) == 3
    restarted = Dispatcher(redis)  # reads its pending entries first: recorded, so only acknowledged
    drain(restarted)
    assert queued_ids(redis, endpoint_id) == ids
    assert pending(redis) == 0 and redis.zcard(layout.DISPATCHED) == 0
    assert restarted.dispatched == 0


def test_a_worker_that_lost_its_lease_queues_nothing_and_the_active_one_sweeps_up(
        redis, allow_loopback):
    endpoint_id = endpoint(redis)
    redis.set(layout.LEASE, "active")
    clock = [0.0]
    bus = Bus(redis)
    active = Dispatcher(redis, holder="active", clock=lambda: clock[0])
    paused = Dispatcher(redis, holder="paused")  # woke from a pause past its lease
    drain(active)
    first = bus.publish("ops.a", "read by the paused one")
    assert paused.step(block_ms=10) == 0  # its fan-out is refused: nothing queued or acknowledged
    assert queued_ids(redis, endpoint_id) == [] and pending(redis) == 1
    second = bus.publish("ops.a", "read by the active one")
    active.step(block_ms=10)
    assert queued_ids(redis, endpoint_id) == [second]
    clock[0] += SWEEP_EVERY  # the active one reads its consumer's pending entries again
    drain(active)
    assert queued_ids(redis, endpoint_id) == [second, first]  # late, not lost
    assert pending(redis) == 0


def test_what_the_active_one_queued_a_paused_one_cannot_queue_again(redis, allow_loopback):
    endpoint_id = endpoint(redis)
    redis.set(layout.LEASE, "first")
    bus, first = Bus(redis), Dispatcher(redis, holder="first")
    drain(first)
    entry = bus.publish("ops.a", "once")
    [(entry_id, fields)] = first.reader.read(">")
    redis.set(layout.LEASE, "second")  # the first pauses past its lease; another takes over
    drain(Dispatcher(redis, holder="second"))
    assert queued_ids(redis, endpoint_id) == [entry]
    assert not first.dispatch(entry_id, fields)  # it wakes: refused
    assert queued_ids(redis, endpoint_id) == [entry]
