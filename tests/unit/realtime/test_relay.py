"""The relay's seam mechanics, step by step (deterministic, no timing).

The Socket.IO server is replaced by a recorder of emits: it is not what is
under test here, and the end-to-end tests drive the real one.
"""
import threading

import orjson
import pytest

from app import services
from app.realtime import presence, rooms
from app.realtime.recent import Recent
from app.realtime.redis_watch import RedisWatch
from app.realtime.relay import Relay
from app.realtime.seam import ReplaySeam
from app.realtime.sse_hub import StreamHub
from app.stream import control
from app.stream.follow import LiveFollower
from app.stream.publish import Bus
from tests.support import wait_until


class RecordingServer:
    def __init__(self):
        self.emits = []

    def fan_out_many(self, namespace, batch):
        for to, text, skip in batch:
            self.emits.append(("notification", orjson.loads(text)["id"], tuple(to),
                               tuple(sorted(skip or ()))))

    def emit(self, event, data, namespace=None, to=None):
        self.emits.append((event, data, to))


class NoNamespace:
    def apply_change(self, *args):
        raise AssertionError("not expected here")


class RecordingNamespace:
    def __init__(self):
        self.calls = []

    def apply_change(self, *args):
        self.calls.append(("apply_change", *args))

    def disconnect_user(self, user):
        self.calls.append(("disconnect_user", user))


def make_relay(redis_server, redis, sio, namespace):
    """A relay as app/services.py wires one, its follower handing on to it as when running."""
    recent = Recent()
    follower = services.live_follower(redis, redis_server.url, recent)
    relay = Relay(sio, follower, ReplaySeam(follower, recent), namespace, StreamHub(max_queue=10),
                  RedisWatch(sio, follower))
    follower.hand_to(*relay.handlers())
    return relay


@pytest.fixture
def relay(redis_server, redis):
    return make_relay(redis_server, redis, RecordingServer(), NoNamespace())


def env(entry_id, topic="news.a", user=None):
    envelope = {"id": entry_id, "topic": topic, "title": "t"}
    if user:
        envelope["user"] = user
    return envelope


def hand_on(relay, envelope):
    """What the live follower does with each notification: deliver, then advance."""
    relay.deliver(envelope)
    relay.follower.advance(envelope["id"])


def test_deliver_routes_to_prefix_rooms_or_the_owner(relay):
    hand_on(relay, env("1-0", "spark.job.done"))
    hand_on(relay, env("2-0", "spark.job.done", user="ann"))
    assert relay.sio.emits == [
        ("notification", "1-0", ("t:*", "t:spark", "t:spark.job", "t:spark.job.done"), ()),
        ("notification", "2-0", (rooms.user_room("ann"),), ()),
    ]
    assert relay.follower.position == "2-0"


def test_held_connection_keeps_only_what_it_may_see(relay):
    relay.seam.hold("s1", "ann", ["news"])
    hand_on(relay, env("5-0", "news.a"))
    hand_on(relay, env("6-0", "sports"))
    hand_on(relay, env("7-0", "other", user="ann"))
    hand_on(relay, env("8-0", "news.b", user="ben"))
    topics, pending = relay.seam.release("s1", "4-0")
    assert topics == ["news"]
    assert [entry_id for entry_id, _text in pending] == ["5-0", "7-0"]
    assert "s1" not in relay.seam.held


def test_release_drops_what_the_replay_already_sent(relay):
    relay.seam.hold("s1", "ann", ["news"])
    for entry_id in ["5-0", "6-0", "7-0"]:
        hand_on(relay, env(entry_id))
    _, pending = relay.seam.release("s1", "6-0")
    assert [entry_id for entry_id, _text in pending] == ["7-0"]


def test_release_without_cursor_after_reset_hands_over_everything(relay):
    relay.seam.hold("s1", "ann", ["news"])
    hand_on(relay, env("5-0"))
    assert [entry_id for entry_id, _text in relay.seam.release("s1", None)[1]] == ["5-0"]


def test_floor_skips_what_a_lagging_relay_would_send_twice(relay):
    hand_on(relay, env("5-0"))
    relay.seam.hold("s1", "ann", ["news"])
    # The replay read the stream up to 7-0; the relay is still at 5-0.
    _, pending = relay.seam.release("s1", "7-0")
    assert pending == []
    hand_on(relay, env("6-0"))
    hand_on(relay, env("7-0"))
    hand_on(relay, env("8-0"))
    skips = [skip for _, _, _, skip in relay.sio.emits[1:]]
    assert skips == [("s1",), ("s1",), ()]
    assert relay.seam.floors == {}


def test_subscription_change_while_held(relay):
    relay.seam.hold("s1", "ann", ["news"])
    relay.seam.update_held("ann", ["spark"], ["news"])
    hand_on(relay, env("5-0", "news.a"))
    hand_on(relay, env("6-0", "spark.x"))
    topics, pending = relay.seam.release("s1", "4-0")
    assert topics == ["spark"] and [entry_id for entry_id, _text in pending] == ["6-0"]


def test_catch_up_relays_what_the_stream_holds_past_the_position(relay, redis):
    bus = Bus(redis)
    before = bus.publish("news.a", "before")
    relay.follower.advance(before)
    missed = [bus.publish("news.b", f"missed {i}") for i in range(1200)]
    relay.follower.catch_up()
    assert [entry_id for _, entry_id, _, _ in relay.sio.emits] == missed
    # The live copies of those arrive later and are dropped as already relayed.
    relay.follower.handle(b"herald:live", b'{"id":"%s","topic":"news.b","title":"x"}' % missed[5].encode())
    assert len(relay.sio.emits) == len(missed)


def test_a_connection_whose_connect_reply_never_goes_out_is_cut_off(redis_server, redis):
    """Connected without being live is the one state a connection must never be in:
    if its CONNECT reply has not gone out in time, it is cut off (its client then
    connects again and is replayed), rather than left joined to no room."""
    from app.realtime.namespace import NotificationsNamespace
    from app.realtime.presence import Presence
    from app.realtime.server import HeraldServer
    sio = HeraldServer(async_mode="threading")
    seam = ReplaySeam(LiveFollower(redis, redis_server.url, name="relay"))
    namespace = NotificationsNamespace(redis, verifier=None, max_subscriptions=10,
                                       presence=Presence(redis, "test:1"), seam=seam)
    sio.register_namespace(namespace)
    namespace.connect_wait = 0.05
    cut = []
    sio.cut_off = lambda eio_sid, why: cut.append((eio_sid, why))
    sid = sio.manager.pre_connect("eio-1", rooms.NAMESPACE)  # its CONNECT reply is pending
    namespace.users[sid] = "ann"
    namespace.presence.opened("ann")
    namespace.seam.hold(sid, "ann", ["news"])
    namespace._replay(sid, "ann", ["news"], "0-0")
    assert cut and cut[0][0] == "eio-1" and "never went live" in cut[0][1]
    assert sid not in namespace.users and sid not in namespace.seam.held
    assert namespace.presence.local == {}  # no longer online through it


def test_each_control_message_reaches_its_handler_and_what_cannot_be_read_is_skipped(redis_server, redis):
    relay = make_relay(redis_server, redis, RecordingServer(), RecordingNamespace())
    read = {"upto": "1-0", "ids": [], "unread": []}
    for raw in (control.read("ann", read), b"not json", b'{"user":"ann"}',
                control.state("ann", {"archived": ["1-0"]}), control.presence("bob", True, 5),
                control.revoked("cy"), control.subscriptions("ann", "add", ["x"], ["x"])):
        relay.follower.handle(b"herald:control", raw)
    assert relay.sio.emits == [
        ("read", read, rooms.user_room("ann")),
        ("state", {"archived": ["1-0"]}, rooms.user_room("ann")),
        ("presence", {"user": "bob", "online": True, "at": 5}, presence.WATCH_ROOM),
    ]
    assert relay.namespace.calls == [("disconnect_user", "cy"), ("apply_change", "ann", ["x"], [], ["x"])]


class EventServer(RecordingServer):
    """A recorder whose events are threads' (the relay's waits use the server's kind)."""

    class eio:  # noqa: N801 (as the real server's attribute is named)
        create_event = threading.Event


def test_a_publish_waits_until_this_process_fanned_its_notification_out(redis_server, redis):
    relay = make_relay(redis_server, redis, EventServer(), NoNamespace())
    relay.running = True
    answers = []
    waiter = threading.Thread(target=lambda: answers.append(relay.reached("5-0", within=30)))
    waiter.start()
    wait_until(lambda: relay.waiters, timeout=10, message="the publish waiting")
    hand_on(relay, env("4-0"))
    assert not answers and relay.waiters  # an older one does not end the wait
    assert relay.reached("6-0", within=30) is False  # one waits at a time: the next answers
    hand_on(relay, env("5-0"))
    waiter.join(10)
    assert answers == [True] and not relay.waiters
    assert relay.reached("3-0") is True  # fanned out already: no wait at all


def test_the_wait_is_bounded_and_none_without_a_running_relay(redis_server, redis):
    relay = make_relay(redis_server, redis, EventServer(), NoNamespace())
    assert relay.reached("9-0", within=30) is False  # not relaying: at once
    relay.running = True
    assert relay.reached("9-0", within=0.01) is False  # never came: bounded
    assert not relay.waiters
