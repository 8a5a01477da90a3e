"""The webhook dispatcher's consumer group when ``herald:stream`` (the stream of the shard
the notifications are in, with several) is recreated (deleted, replaced, lost with Redis'
data): it starts from the beginning of the new stream, so what is published after the
recreate is delivered, and the stream's epoch stays true."""
from app.stream import state
from app.stream.publish import Bus
from app.stream.shards import configured
from app.webhooks import store
from app.webhooks.dispatch import Dispatcher


def queued_ids(redis, endpoint_id):
    return [item.split(b" ", 1)[0].decode()
            for item in redis.lrange(store.queue_key(endpoint_id), 0, -1)]


def ops_shard():
    """The shard the tests' notifications (on ``ops.*``) are in."""
    return configured().of_topic("ops")


def drain(dispatcher):
    for _ in range(5):  # NOGROUP (the group is remade), then what there is, then nothing
        dispatcher.step(block_ms=10)


def test_what_is_published_after_a_recreate_is_dispatched(redis, allow_loopback):
    endpoint = store.create(redis, {"url": "http://127.0.0.1:9/", "topics": ["*"]}, "test")
    bus, dispatcher = Bus(redis), Dispatcher(redis)
    before = bus.publish("ops.a", "before")
    drain(dispatcher)
    redis.delete(ops_shard().stream)  # the group goes with it
    after = [bus.publish("ops.b", f"after {i}") for i in range(3)]  # a new stream, a new epoch
    drain(dispatcher)
    assert queued_ids(redis, endpoint["id"]) == [before, *after]


def test_a_group_remade_before_the_next_publish_keeps_the_epoch_true(redis, allow_loopback):
    """The worker remakes the group (and so the stream, empty) before anything is published:
    the new stream still gets an epoch, so a client's cursor from the old one is refused a
    replay (``reset``), and what is published next is dispatched."""
    endpoint = store.create(redis, {"url": "http://127.0.0.1:9/", "topics": ["*"]}, "test")
    bus, dispatcher = Bus(redis), Dispatcher(redis)
    old = bus.publish("ops.a", "old")
    drain(dispatcher)
    redis.delete(ops_shard().stream)
    drain(dispatcher)  # NOGROUP: remade, on an empty stream
    new = bus.publish("ops.b", "new")
    drain(dispatcher)
    assert queued_ids(redis, endpoint["id"]) == [old, new]
    assert state.missed_history(redis, old, shard=ops_shard())
    assert not state.missed_history(redis, new, shard=ops_shard())


def test_a_first_endpoint_gets_only_what_is_published_after_it(redis, allow_loopback):
    bus = Bus(redis)
    bus.publish("ops.a", "before any endpoint")
    endpoint = store.create(redis, {"url": "http://127.0.0.1:9/", "topics": ["*"]}, "test")
    after = bus.publish("ops.b", "after")
    drain(Dispatcher(redis))
    assert queued_ids(redis, endpoint["id"]) == [after]


def test_a_delete_between_a_read_and_its_fan_out_is_ridden_out(redis, allow_loopback, caplog):
    """The stream deleted after a batch was read, before it was queued: the fan-out's XPENDING
    answered NOGROUP, which ended the worker. Now the fan-out is in the webhooks' own slot
    (layout.py): the batch read is queued still (it was published after the endpoint was
    made: nothing lost), its XACK finds nothing, the group is made again at the next read,
    and what is published next is queued after it."""
    endpoint = store.create(redis, {"url": "http://127.0.0.1:9/", "topics": ["*"]}, "test")
    bus, dispatcher = Bus(redis), Dispatcher(redis)
    drain(dispatcher)
    read = dispatcher._read

    def read_then_delete(block_ms):
        entries = read(block_ms)
        if entries:
            redis.delete(ops_shard().stream)
        return entries
    dispatcher._read = read_then_delete
    read_before = [bus.publish("ops.a", "read before the delete"),
                   bus.publish("ops.a", "read before the delete too")]
    drain(dispatcher)
    dispatcher._read = read
    after = bus.publish("ops.b", "after")
    drain(dispatcher)
    assert queued_ids(redis, endpoint["id"]) == [*read_before, after]
    assert "the group is made again" in caplog.text
