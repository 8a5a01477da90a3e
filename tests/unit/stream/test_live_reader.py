"""The follower's reader of a subscription (app/stream/live_reader.py), on real
redis-servers of its own (standalone in both test phases: what it reads is one
node's connection, whichever node the follower subscribed on)."""
import contextlib
import signal

import pytest
import redis as redis_py

from app.redis_client import connect
from app.stream.live_reader import LiveReader
from tests.support import RedisServer, wait_until


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("live-reader"), durable=False)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_server(tmp_path):
    """A redis-server this test alone may pause or kill."""
    server = RedisServer(tmp_path, durable=False)
    server.start()
    yield server
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGCONT)
    server.stop()


@contextlib.contextmanager
def subscribed(url, channel, sharded=False):
    """A subscribed PubSub and a publisher, once Redis counts the subscription;
    both closed after."""
    subscriber = connect(url, socket_timeout=None)
    pubsub = subscriber.pubsub(ignore_subscribe_messages=True)
    publisher = connect(url)
    try:
        if sharded:
            pubsub.ssubscribe(channel)
            wait_until(lambda: publisher.execute_command("PUBSUB", "SHARDNUMSUB", channel)[1] == 1,
                       message="the sharded subscription")
        else:
            pubsub.subscribe(channel)
            wait_until(lambda: publisher.pubsub_numsub(channel)[0][1] == 1,
                       message="the subscription")
        yield pubsub, publisher
    finally:
        pubsub.close(), subscriber.close(), publisher.close()


def read(reader, count, most=100, calls=50):
    """Batches from ``reader`` until ``count`` messages came (at most ``calls`` reads)."""
    batches = []
    for _ in range(calls):
        if sum(map(len, batches)) >= count:
            break
        batch = reader.messages(most)
        if batch:
            batches.append(batch)
    return batches


def test_what_arrived_together_is_read_together_in_order(server):
    with subscribed(server.url, "t:live") as (pubsub, publisher):
        reader = LiveReader(pubsub, wait=0.5)
        pipe = publisher.pipeline(transaction=False)
        for number in range(250):
            pipe.publish("t:live", str(number))
        pipe.execute()  # Redis wrote them all to the subscriber before answering this

        batches = read(reader, 250)

        assert [len(batch) for batch in batches] == [100, 100, 50]
        assert [pair for batch in batches for pair in batch] == [
            (b"t:live", str(number).encode()) for number in range(250)]


def test_what_redis_py_had_read_already_is_handed_on(server):
    with subscribed(server.url, "t:live") as (pubsub, publisher):
        pipe = publisher.pipeline(transaction=False)
        for number in range(5):
            pipe.publish("t:live", str(number))
        pipe.execute()
        first = None
        for _ in range(3):  # the subscription's confirmation (None), then the first message
            first = pubsub.get_message(timeout=1)
            if first is not None:
                break
        assert first["data"] == b"0"  # redis-py holds the other four in its parser now

        reader = LiveReader(pubsub, wait=0.2)

        assert read(reader, 4, calls=3) == [[(b"t:live", str(n).encode()) for n in range(1, 5)]]


def test_sharded_messages_are_read(server):
    with subscribed(server.url, "t:shard", sharded=True) as (pubsub, publisher):
        reader = LiveReader(pubsub, wait=0.5)
        publisher.execute_command("SPUBLISH", "t:shard", "one")
        assert read(reader, 1) == [[(b"t:shard", b"one")]]


def test_an_idle_link_is_pinged_and_answers(server):
    with subscribed(server.url, "t:idle") as (pubsub, publisher):
        reader = LiveReader(pubsub, wait=0.05, health_every=0.1)
        def pings():
            return publisher.info("commandstats").get("cmdstat_ping", {}).get("calls", 0)
        before = sent = pings()
        for _ in range(60):  # 3 s of waits at most
            assert reader.messages(100) == []  # no error: each PING was answered in time
            sent = pings() - before
            if sent >= 2 and reader.pinged is None:
                break
        assert sent >= 2 and reader.pinged is None  # two went out, the last one answered


def test_a_link_that_does_not_answer_is_given_up(own_server):
    with subscribed(own_server.url, "t:silent") as (pubsub, publisher):
        reader = LiveReader(pubsub, wait=0.05, health_every=0.1)
        own_server.process.send_signal(signal.SIGSTOP)  # open, and silent
        with pytest.raises(redis_py.ConnectionError, match="did not answer a PING"):
            for _ in range(100):  # 5 s of waits at most
                reader.messages(100)
        own_server.process.send_signal(signal.SIGCONT)  # (the fixture's too, should this fail)


def test_a_closed_link_is_an_error_the_follower_recovers_from(own_server):
    with subscribed(own_server.url, "t:closed") as (pubsub, publisher):
        reader = LiveReader(pubsub, wait=0.05)
        own_server.kill()
        with pytest.raises(redis_py.ConnectionError, match="closed the subscription"):
            for _ in range(100):
                reader.messages(100)


def test_an_error_answer_is_an_error(server):
    with subscribed(server.url, "t:error") as (pubsub, publisher):
        reader = LiveReader(pubsub, wait=0.5)
        pubsub.connection.send_command("PUBLISH")  # wrong number of arguments
        with pytest.raises(redis_py.ConnectionError, match="wrong number of arguments"):
            read(reader, 1)
