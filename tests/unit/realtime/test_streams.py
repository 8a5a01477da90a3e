"""The Server-Sent Events hub: routing by rooms, following subscription changes,
and shedding a stream that falls behind (as Socket.IO sheds a slow client)."""
from app.realtime import rooms
from app.realtime.streams import END, Stream, StreamHub


def drain(stream):
    items = []
    while not stream.queue.empty():
        items.append(stream.queue.get_nowait())
    return items


def test_routes_by_rooms_once_each_and_honours_skip():
    hub = StreamHub(max_queue=10)
    ann = Stream(hub.new_key(), "ann", ["news", "news.a"], None, 10)
    bob = Stream(hub.new_key(), "bob", ["sports"], None, 10)
    hub.open(ann)
    hub.open(bob)
    hub.deliver([(rooms.rooms_for("news.a.b", None), "1-0", "{1}", None),
                 (rooms.rooms_for("news.a", "bob"), "2-0", "{2}", None),
                 (rooms.rooms_for("news.x", None), "3-0", "{3}", {ann.key})])
    assert drain(ann) == [("1-0", "{1}")]  # once, though in two of its rooms
    assert drain(bob) == [("2-0", "{2}")]  # private to bob
    hub.close(ann.key)
    hub.deliver([(rooms.rooms_for("news.a", None), "4-0", "{4}", None)])
    assert drain(ann) == [] and hub.rooms.keys() == {rooms.user_room("bob"), rooms.topic_room("sports")}


def test_follows_subscription_changes_within_its_limit():
    hub = StreamHub(max_queue=10)
    limited = Stream(hub.new_key(), "ann", ["news"], ["news", "ops"], 10)
    hub.open(limited)
    hub.apply_change("ann", ["ops", "sports"], ["news"], full=["ops", "sports"])
    assert limited.topics == ["ops"]
    hub.deliver([(rooms.rooms_for("sports.x", None), "1-0", "{1}", None),
                 (rooms.rooms_for("ops.x", None), "2-0", "{2}", None),
                 (rooms.rooms_for("news.x", None), "3-0", "{3}", None)])
    assert drain(limited) == [("2-0", "{2}")]


def test_a_stream_that_falls_behind_is_ended():
    hub = StreamHub(max_queue=3)
    slow = Stream(hub.new_key(), "ann", ["news"], None, 3)
    hub.open(slow)
    hub.deliver([(rooms.rooms_for("news", None), f"{i}-0", "{}", None) for i in range(1, 6)])
    assert drain(slow) == [(f"{i}-0", "{}") for i in range(1, 4)] + [END]
    assert "too slow" in slow.ended and hub.shed == 1 and len(hub) == 0
