"""The ZeroMQ bridge, as a real process, over real sockets, into a real Redis."""
import json
import subprocess
import sys
import threading
import time

import orjson
import pytest
import zmq

from app.stream.publish import Bus
from herald_client.zmq import Publisher, PublishError, Subscriber
from tests.helpers.shards import history, history_length
from tests.support import ROOT, Bridge, RedisServer, free_port, wait_until

SUBSCRIPTION_SETTLE = 0.5  # ZeroMQ's slow joiner: let SUBSCRIBE reach the XPUB


@pytest.fixture
def bridge(redis_server, redis, tmp_path):
    running = Bridge(redis_server.url, tmp_path)
    running.start()
    yield running
    running.stop()


def stream(redis):
    """Every notification stored (of every shard, by time then shard, in a sharded
    history)."""
    return [(entry_id, orjson.loads(fields[b"envelope"])) for entry_id, fields in history(redis)]


def test_ten_thousand_fire_and_forget_land_in_order(bridge, redis):
    with Publisher(bridge.pull) as publisher:
        for i in range(10_000):
            publisher.publish("load.ff", f"n{i}", data={"i": i})
    wait_until(lambda: history_length(redis) >= 10_000, timeout=60, message="10,000 in the stream")
    entries = stream(redis)
    assert [envelope["data"]["i"] for _, envelope in entries] == list(range(10_000))
    assert {envelope["origin"] for _, envelope in entries} == {publisher.origin}


def test_confirmed_ids_match_the_stream(bridge, redis):
    with Publisher(bridge.router, confirmed=True) as publisher:
        ids = [publisher.publish("load.confirmed", f"c{i}", severity="success") for i in range(200)]
    entries = stream(redis)
    assert [entry_id for entry_id, _ in entries] == ids
    assert [envelope["title"] for _, envelope in entries] == [f"c{i}" for i in range(200)]


def test_every_kind_of_bad_frame_is_survived(bridge, redis):
    context = zmq.Context.instance()
    push, dealer = context.socket(zmq.PUSH), context.socket(zmq.DEALER)
    try:
        push.connect(bridge.pull)
        dealer.connect(bridge.router)
        answers = send_bad_frames(push, dealer)
        # Order holds per socket, not across the PULL and ROUTER sockets: wait for the push.
        wait_until(lambda: history_length(redis) == 1, timeout=15, message="the good push")
    finally:
        push.close(0)
        dealer.close(0)
    assert [a["ok"] for a in answers] == [False] * 5
    assert "not valid JSON" in answers[0]["error"]
    assert answers[1]["error"].startswith("topic: ")
    assert "65536 bytes" in answers[2]["error"]
    assert "one frame of JSON" in answers[3]["error"] and "one frame of JSON" in answers[4]["error"]

    with Publisher(bridge.router, confirmed=True) as publisher:
        confirmed = publisher.publish("ok", "confirmed after the bad ones")
    wait_until(lambda: history_length(redis) == 2, message="the two good ones")
    entries = stream(redis)
    assert [e["title"] for _, e in entries] == ["pushed after the bad ones",
                                                "confirmed after the bad ones"]
    assert entries[1][0] == confirmed
    assert "dropped a bad PULL message" in bridge.output()
    bridge.stop()
    counters = bridge.counters()
    assert counters["bad_frame_count"] == 2 + 2
    assert counters["bad_not_json"] == 1 + 1
    assert counters["bad_too_large"] == 1 + 1
    assert counters["bad_invalid_envelope"] == 4 + 1
    assert counters["stored"] == 2


HOSTILE = [  # once each killed the bridge or would have (issue 23): validation was not total
    {"topic": "z.b", "title": "x", "url": "http://[::1"},
    {"topic": "z.b", "title": "\ud800"},
    {"topic": "z.b", "title": "x", "data": {"n": 10**30}},
]


def test_a_hostile_envelope_is_refused_and_what_follows_it_is_stored(bridge, redis):
    """The issue's case: 2,000 numbered pushes with a malformed one at #1,000 lost 999."""
    context = zmq.Context.instance()
    push, req = context.socket(zmq.PUSH), context.socket(zmq.REQ)
    try:
        push.connect(bridge.pull)
        req.connect(bridge.router)
        for i in range(2000):
            if i == 1000:
                for hostile in HOSTILE:
                    push.send_multipart([b"z.b", json.dumps(hostile).encode()])
            push.send_multipart([b"z.b", json.dumps({"title": f"n{i}", "data": {"i": i}}).encode()])
        answers = []
        for hostile in HOSTILE:
            req.send(json.dumps(hostile).encode())
            assert req.poll(10_000), "the bridge must answer a hostile request"
            answers.append(json.loads(req.recv()))
        wait_until(lambda: history_length(redis) >= 2000, timeout=60, message="all 2,000 stored")
    finally:
        push.close(0)
        req.close(0)
    assert [a["ok"] for a in answers] == [False] * 3
    assert [a["error"].split(":")[0] for a in answers] == ["url", "envelope", "envelope"]
    assert [e["data"]["i"] for _, e in stream(redis)] == list(range(2000))
    assert bridge.process.poll() is None, "the bridge is still running"
    bridge.stop()
    counters = bridge.counters()
    assert counters["bad_invalid_envelope"] == 2 and counters["bad_not_json"] == 4


def send_bad_frames(push, dealer):
    """Every kind of bad message on both ingest sockets; the ROUTER's answers."""
    good = json.dumps({"topic": "ok", "title": "t"}).encode()
    for message in [
        [b"ok"],                                             # one frame
        [b"ok", good, b"extra"],                             # three frames
        [b"ok", b"{not json"],                               # not JSON
        [b"ok", b"[1, 2]"],                                  # not an object
        [b"ok", json.dumps({"title": "t", "severity": "loud"}).encode()],  # invalid envelope
        [b"ok", json.dumps({"title": "x" * 70_000}).encode()],             # over 64 KiB
        [b"other", good],                                    # topic frame disagrees
        [b"\xff\xfe", json.dumps({"title": "t"}).encode()],  # topic not UTF-8
    ]:
        push.send_multipart(message)
    push.send_multipart([b"ok", json.dumps({"title": "pushed after the bad ones"}).encode()])
    answers = []
    for frames in ([b"", b"{nope"], [b"", json.dumps({"topic": "Bad", "title": "t"}).encode()],
                   [b"", json.dumps({"topic": "a", "title": "x" * 70_000}).encode()],
                   [b"", good, good], [good, good]):
        dealer.send_multipart(frames)
        assert dealer.poll(5000), "the bridge must answer a bad request"
        answers.append(json.loads(dealer.recv_multipart()[-1]))
    return answers


def test_three_peers_prefix_filters_and_echo_suppression(bridge):
    """The seed example: C1 wants 123; C2 wants 123 and 456; C3 wants 123, 456 and 789.
    Each publishes on every topic; each gets what it subscribed to, from the others only."""
    wants = {"C1": ["123"], "C2": ["123", "456"], "C3": ["123", "456", "789"]}
    origins = {name: f"{n:02x}" * 4 for n, name in enumerate(wants, start=1)}
    subscribers = {name: Subscriber(topics, bridge.xpub, origin=origins[name])
                   for name, topics in wants.items()}
    time.sleep(SUBSCRIPTION_SETTLE)
    for name in wants:
        with Publisher(bridge.router, confirmed=True, origin=origins[name]) as publisher:
            for topic in ("123", "456", "789"):
                publisher.publish(topic, f"{topic} from {name}")
    got = {}
    for name, subscriber in subscribers.items():
        got[name] = set()
        while (envelope := subscriber.receive(timeout=1)) is not None:
            got[name].add(envelope["title"])
        subscriber.close()
    for name, topics in wants.items():
        assert got[name] == {f"{topic} from {other}" for topic in topics for other in wants
                             if other != name}, name
    assert got["C1"] == {"123 from C2", "123 from C3"}


def test_subscriber_matches_whole_segments_only(bridge):
    with Subscriber(["spark"], bridge.xpub) as subscriber:
        time.sleep(SUBSCRIPTION_SETTLE)
        with Publisher(bridge.router, confirmed=True) as publisher:
            publisher.publish("sparkle", "not spark")
            publisher.publish("spark.job.done", "spark")
            publisher.publish("spark.marker", "after both")
        assert subscriber.receive(timeout=5)["topic"] == "spark.job.done"
        assert subscriber.receive(timeout=5)["topic"] == "spark.marker"  # sparkle never came


def test_egress_carries_notifications_from_every_publisher(bridge, redis):
    with Subscriber(["*"], bridge.xpub) as subscriber:
        time.sleep(SUBSCRIPTION_SETTLE)
        published = Bus(redis).publish("rest.like", "published through Redis directly")
        envelope = subscriber.receive(timeout=5)
    assert envelope["id"] == published and envelope["topic"] == "rest.like"


def test_private_notifications_need_authenticated_peers(bridge, redis):
    """Without CURVE any local process can reach the bridge: it may neither put a
    notification in a user's private feed nor read anyone's private ones."""
    with Publisher(bridge.router, confirmed=True) as publisher:
        with pytest.raises(PublishError, match="private notifications need an authenticated peer"):
            publisher.publish("account.password", "Your password expired", user="ann")
    with Publisher(bridge.pull) as pusher:
        pusher.publish("account.password", "pushed, also refused", user="ann")
    with Subscriber(["*"], bridge.xpub) as subscriber:
        time.sleep(SUBSCRIPTION_SETTLE)
        bus = Bus(redis)
        bus.publish("account.secret", "for ann only", user="ann")
        marker = bus.publish("account.public", "for anyone")
        assert subscriber.receive(timeout=5)["id"] == marker  # the private one was withheld
    assert sorted(e["title"] for _, e in stream(redis)) == ["for ann only", "for anyone"]


def test_trusted_local_peers_may_publish_and_read_private_notifications(redis_server, redis,
                                                                         tmp_path):
    bridge = Bridge(redis_server.url, tmp_path, BRIDGE_TRUST_LOCAL="1")
    bridge.start()
    try:
        with Subscriber(["*"], bridge.xpub) as subscriber:
            time.sleep(SUBSCRIPTION_SETTLE)
            with Publisher(bridge.router, confirmed=True) as publisher:
                private = publisher.publish("account.notice", "for ann", user="ann")
            assert subscriber.receive(timeout=5)["id"] == private
    finally:
        bridge.stop()


def test_bridge_refuses_to_bind_beyond_loopback_without_keys(redis_server, tmp_path):
    exposed = f"tcp://0.0.0.0:{free_port()}"
    done = subprocess.run([sys.executable, "-m", "workers.zmq_bridge"], cwd=ROOT, timeout=30,
                          env=dict(Bridge(redis_server.url, tmp_path).env, BRIDGE_PULL=exposed),
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert f"refusing to bind {exposed} without CURVE keys" in done.stderr


def keygen(folder, name):
    subprocess.run([sys.executable, "-m", "workers.zmq_bridge", "keygen", str(folder), "--name", name],
                   cwd=ROOT, check=True, capture_output=True, timeout=30)
    return folder / f"{name}.key", folder / f"{name}.key_secret"


def test_curve_lets_in_allowed_keys_only(redis_server, redis, tmp_path):
    server_public, server_secret = keygen(tmp_path / "server", "server")
    allowed_dir = tmp_path / "allowed"
    allowed_public, allowed_secret = keygen(allowed_dir, "good-client")
    _, stranger_secret = keygen(tmp_path / "strangers", "stranger")
    bridge = Bridge(redis_server.url, tmp_path, BRIDGE_CURVE_SECRET=str(server_secret),
                    BRIDGE_CURVE_CLIENTS=str(allowed_dir))
    bridge.start()
    try:
        with Publisher(bridge.router, confirmed=True, curve=(allowed_secret, server_public)) as ok:
            assert ok.publish("secure.ok", "allowed")
        with Publisher(bridge.router, confirmed=True, timeout=1,
                       curve=(stranger_secret, server_public)) as stranger:
            with pytest.raises(PublishError, match="no answer"):
                stranger.publish("secure.no", "stranger")
        with Publisher(bridge.router, confirmed=True, timeout=1) as plain:
            with pytest.raises(PublishError, match="no answer"):
                plain.publish("secure.no", "no key at all")
        with Publisher(bridge.pull, curve=(stranger_secret, server_public)) as pusher:
            pusher.publish("secure.no", "stranger push")
            # An allowed peer's push after it: once that is stored, the stranger's is not coming.
            with Publisher(bridge.pull, curve=(allowed_secret, server_public)) as allowed:
                allowed.publish("secure.ok", "marker")
                wait_until(lambda: len(stream(redis)) >= 2, message="the allowed push")
        assert [e["title"] for _, e in stream(redis)] == ["allowed", "marker"]
    finally:
        bridge.stop()


def test_redis_restart_loses_no_confirmed_notification(tmp_path):
    redis_server = RedisServer(tmp_path)
    redis_server.start()
    bridge = Bridge(redis_server.url, tmp_path, BRIDGE_CONFIRM_TIMEOUT="30")
    bridge.start()
    acked, refused, pushed = [], [], []
    stop = threading.Event()

    def confirmed():
        with Publisher(bridge.router, confirmed=True, timeout=40) as publisher:
            for i in range(100_000):
                if stop.is_set():
                    return
                try:
                    acked.append(publisher.publish("outage.confirmed", f"c{i}"))
                except PublishError as exc:
                    refused.append(str(exc))
                time.sleep(0.002)

    def fire_and_forget():
        with Publisher(bridge.pull) as publisher:
            for i in range(100_000):
                if stop.is_set():
                    return
                publisher.publish("outage.ff", f"f{i}")
                pushed.append(i)
                time.sleep(0.002)

    threads = [threading.Thread(target=confirmed), threading.Thread(target=fire_and_forget)]
    client = redis_server.client()
    try:
        for thread in threads:
            thread.start()
        wait_until(lambda: len(acked) >= 100, message="confirmed publishing")
        redis_server.kill()
        time.sleep(1.5)
        redis_server.start()
        before = len(acked)
        wait_until(lambda: len(acked) >= before + 100, timeout=30, message="publishing after")
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    try:
        wait_until(lambda: history_length(client) >= len(acked) + len(pushed), timeout=30,
                   message="the backlog flushed")
        entries = stream(client)
        confirmed_ids = [i for i, e in entries if e["topic"] == "outage.confirmed"]
        assert refused == []
        assert confirmed_ids == acked  # each stored once, in order, none lost
        assert [e["title"] for _, e in entries if e["topic"] == "outage.ff"] == [
            f"f{i}" for i in pushed]
        assert "Redis is unreachable" in bridge.output() and "Redis is back" in bridge.output()
    finally:
        client.close()
        bridge.stop()
        redis_server.stop()


def test_backlog_bound_and_confirm_timeout_while_redis_is_away(tmp_path):
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"
    bridge = Bridge(dead_redis, tmp_path, BRIDGE_BACKLOG="5", BRIDGE_CONFIRM_TIMEOUT="1")
    bridge.start()
    try:
        with Publisher(bridge.router, confirmed=True, timeout=5) as publisher:
            with pytest.raises(PublishError, match="not stored within 1 s"):
                publisher.publish("away.x", "times out")
        with Publisher(bridge.pull) as pusher:
            for i in range(5):
                pusher.publish("away.y", f"held {i}")
        time.sleep(0.5)
        with Publisher(bridge.router, confirmed=True, timeout=5) as publisher:
            with pytest.raises(PublishError, match="backlog full"):
                publisher.publish("away.z", "no room")
    finally:
        bridge.stop()
    assert "stopping with 5 notifications not stored" in bridge.output()
