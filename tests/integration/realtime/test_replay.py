"""Replay on connect: `last_id`, `reset`, and the seam between replay and live."""
import random
import threading
import time

import pytest
import socketio

from app.stream.history import visible_to
from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.support import NAMESPACE, Listener, LiveServer, marked, wait_until


@pytest.fixture
def ann(redis):
    accounts.create_user(redis, "ann", "ann-password")
    accounts.create_user(redis, "ben", "ben-password")
    subscriptions.add(redis, "ann", ["seam", "news"], limit=10)
    return "ann"


@pytest.fixture
def bus(redis):
    return Bus(redis)


def expected_after(redis, user, topics, last_id):
    """What `user` may see after `last_id`, read straight from the stream."""
    return [entry_id.decode() for entry_id, fields in redis.xrange(STREAM, min=f"({last_id}")
            if visible_to(user, topics, fields[b"topic"].decode(), fields[b"user"].decode())]


def test_replay_sends_what_was_missed_in_order_then_goes_live(live_server, redis, ann, bus):
    seen = bus.publish("news.a", "seen before")
    missed = [bus.publish("news.b", "missed 1"),
              bus.publish("other", "mine", user="ann"),
              bus.publish("seam.x", "missed 2")]
    bus.publish("sports", "not subscribed")
    bus.publish("news.c", "ben's", user="ben")
    listener = Listener(live_server, live_server.token("ann", "ann-password"), last_id=seen)
    try:
        wait_until(lambda: len(listener.received) >= 3, message="replay")
        live = bus.publish("news.d", "live")
        marker = marked(bus.publish, listener, "ann")
        assert listener.ids() == missed + [live, marker]
        assert listener.resets == []
    finally:
        listener.close()


def test_last_id_at_the_newest_replays_nothing(live_server, redis, ann, bus):
    newest = bus.publish("news.a", "old")
    listener = Listener(live_server, live_server.token("ann", "ann-password"), last_id=newest)
    try:
        live = bus.publish("news.b", "new")
        marker = marked(bus.publish, listener, "ann")
        assert listener.ids() == [live, marker]
    finally:
        listener.close()


def test_bad_last_id_is_refused(live_server, ann):
    client = socketio.Client(reconnection=False)
    token = live_server.token("ann", "ann-password")
    with pytest.raises(socketio.exceptions.ConnectionError):
        client.connect(live_server.url, namespaces=[NAMESPACE], transports=["websocket"],
                       auth={"token": token, "last_id": "not-an-id"}, wait_timeout=5)
    client.disconnect()


def test_reset_when_last_id_is_older_than_history(redis_server, redis, ann, tmp_path):
    server = LiveServer(redis_server.url, tmp_path)
    server.start()
    bus = Bus(redis, history_max=50)
    first = bus.publish("news.first", "soon trimmed")
    for i in range(500):
        bus.publish("news.more", f"n{i}")
    assert redis.xlen(STREAM) < 500
    listener = Listener(server, server.token("ann", "ann-password"), last_id=first)
    try:
        wait_until(lambda: listener.resets, message="reset")
        assert listener.received == []
        live = bus.publish("news.after", "live after reset")
        wait_until(lambda: listener.ids() == [live], message="live after reset")
    finally:
        listener.close()
        server.stop()


def test_seam_under_load_fifty_clients(live_server, redis, ann, bus):
    """Publish continuously while 50 clients connect with various last_ids:
    each sees exactly the stream's visible entries after its last_id, in order."""
    token = live_server.token("ann", "ann-password")
    topics = subscriptions.list_topics(redis, "ann")
    rng = random.Random(7)
    published = [bus.publish("seam.start", f"s{i}") for i in range(200)]
    stop = threading.Event()

    def publish():
        kinds = [("seam.tick", None), ("news.x", None), ("noise", None),
                 ("seam.mine", "ann"), ("seam.bens", "ben")]
        count = 0
        while not stop.is_set() and count < 5000:
            topic, owner = rng.choice(kinds)
            fields = {"user": owner} if owner else {}
            published.append(bus.publish(topic, f"p{count}", **fields))
            count += 1
            time.sleep(0.001)

    publisher = threading.Thread(target=publish)
    publisher.start()
    listeners = []
    try:
        for _ in range(50):
            last_id = rng.choice(published[:-1])
            listeners.append((last_id, Listener(live_server, token, last_id=last_id)))
            time.sleep(0.02)
    finally:
        stop.set()
        publisher.join(30)
    try:
        for last_id, listener in listeners:
            want = expected_after(redis, "ann", topics, last_id)
            wait_until(lambda: len(listener.received) >= len(want), timeout=20,
                       message=f"client from {last_id}")
        # One marker for ann reaches all her connections, after all the rest.
        marker = bus.publish("test.marker", "marker", user="ann")
        for _, listener in listeners:
            wait_until(lambda: marker in listener.ids(), timeout=20, message="the marker")
        for last_id, listener in listeners:
            assert listener.ids() == expected_after(redis, "ann", topics, last_id)
            assert listener.ids()[-1] == marker
    finally:
        for _, listener in listeners:
            listener.close()
