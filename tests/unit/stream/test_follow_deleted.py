"""The live follower (the web relay's and the ZeroMQ bridge's egress) goes on across a
``DEL herald:stream``: it reads the stream with XRANGE and follows herald:live, neither of
which a delete interrupts; what the new stream gets is handed on."""
import threading

from app.stream.follow import LiveFollower
from app.stream.keys import STREAM
from app.stream.publish import Bus
from tests.support import wait_until


def test_the_follower_hands_on_what_a_recreated_stream_gets(redis_server, redis):
    bus, handed = Bus(redis), []
    follower = LiveFollower(redis, redis_server.url, name="test")
    running = threading.Event()
    running.set()
    thread = threading.Thread(target=follower.run,
                              args=(running.is_set, lambda envelope, raw: handed.append(envelope["id"])))
    thread.start()
    try:
        wait_until(lambda: follower.connected, message="following")
        old = bus.publish("ops.a", "old")
        wait_until(lambda: handed == [old], message="the old one handed on")
        redis.delete(STREAM)
        # At once: a stream made anew in the same millisecond goes on above the old ids
        # (tests/unit/stream/test_recreate_ids.py).
        new = bus.publish("ops.b", "new")
        wait_until(lambda: handed == [old, new], message="the new stream's first handed on")
        follower.catch_up()  # a resubscription after the delete: nothing again, nothing lost
        assert handed == [old, new]
    finally:
        running.clear()
        thread.join(10)
        follower.pubsub_client.close()
