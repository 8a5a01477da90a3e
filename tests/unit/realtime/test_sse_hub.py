"""The Server-Sent Events hub: routing by rooms, following subscription changes,
and shedding a stream that falls behind (as Socket.IO sheds a slow client)."""
import gevent
import gevent.socket
import pytest

from app.realtime import rooms
from app.realtime.sse_hub import END, Stream, StreamHub
from app.realtime.wire.sse_writer import DirectEvents


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


# -- idle streams written by the fan-out loop itself (wire/sse_writer.py) ----------------

class Response:
    """What DirectEvents reads of pywsgi's handler: the socket, and the framing."""

    def __init__(self, sock, chunked=True):
        self.socket = sock
        self.response_use_chunked = chunked


@pytest.fixture
def pair():
    ours, theirs = gevent.socket.socketpair()
    yield ours, theirs
    ours.close()
    theirs.close()


def direct_stream(hub, sock, chunked=True, expires=None):
    stream = Stream(hub.new_key(), "ann", ["news"], None, 10,
                    DirectEvents(Response(sock, chunked)), expires)
    hub.open(stream)
    stream.idle = True  # as its greenlet sets it, parked on the empty queue
    return stream


def chunk(events):
    """``events`` as pywsgi frames a piece of a chunked response."""
    return b"%x\r\n" % len(events) + events + b"\r\n"


def nothing_more(sock):
    """Nothing (more) was written to the peer's end ``sock``."""
    sock.setblocking(False)
    with pytest.raises(BlockingIOError):
        sock.recv(100)


def received(sock, size):
    data = b""
    with gevent.Timeout(5):
        while len(data) < size:
            data += sock.recv(size - len(data))
    return data


def test_an_idle_stream_gets_a_batch_in_one_chunk_from_the_loop_itself(pair):
    ours, theirs = pair
    hub = StreamHub(max_queue=10)
    stream = direct_stream(hub, ours)
    hub.deliver([(rooms.rooms_for("news.a", None), "1-0", '{"n":1}', None),
                 (rooms.rooms_for("sports", None), "2-0", '{"n":2}', None),
                 (rooms.rooms_for("news.b", None), "3-0", '{"n":3}', None)])
    events = b'id: 1-0\ndata: {"n":1}\n\nid: 3-0\ndata: {"n":3}\n\n'
    expected = chunk(events)  # one chunk, as pywsgi frames it
    assert received(theirs, len(expected)) == expected
    assert stream.queue.empty() and hub.delivered == hub.written == 2


def test_a_response_without_chunks_gets_the_events_as_they_are(pair):
    ours, theirs = pair
    hub = StreamHub(max_queue=10)
    direct_stream(hub, ours, chunked=False)
    hub.deliver([(rooms.rooms_for("news", None), "1-0", "{}", None)])
    events = b"id: 1-0\ndata: {}\n\n"
    assert received(theirs, len(events)) == events


def test_a_stream_whose_greenlet_is_not_parked_is_queued_to(pair):
    ours, theirs = pair
    hub = StreamHub(max_queue=10)
    stream = direct_stream(hub, ours)
    stream.idle = False  # writing, or woken and about to
    hub.deliver([(rooms.rooms_for("news", None), "1-0", "{1}", None)])
    stream.idle = True  # parked again, but one is queued: it waits its turn behind it
    hub.deliver([(rooms.rooms_for("news", None), "2-0", "{2}", None)])
    assert drain(stream) == [("1-0", "{1}"), ("2-0", "{2}")] and hub.written == 0
    nothing_more(theirs)


def test_what_the_kernel_does_not_take_is_finished_before_anything_else(pair):
    ours, theirs = pair
    hub = StreamHub(max_queue=10)
    stream = direct_stream(hub, ours)
    big = "x" * (4 << 20)  # more than the socket pair buffers
    hub.deliver([(rooms.rooms_for("news", None), "1-0", big, None)])
    assert stream.direct.writer.busy
    hub.deliver([(rooms.rooms_for("news", None), "2-0", "{2}", None)])
    assert drain(stream) == [("2-0", "{2}")]  # behind the rest, in the queue
    events = b"id: 1-0\ndata: " + big.encode() + b"\n\n"
    first = chunk(events)
    reader = gevent.spawn(received, theirs, len(first) + 5)
    stream.direct.wait()  # what the stream's greenlet does before pywsgi writes
    assert not stream.direct.writer.busy
    ours.sendall(b"after")  # pywsgi's next write: after the whole of the first
    assert reader.get() == first + b"after"
    assert hub.written == 1


def test_past_its_credentials_end_nothing_is_written(pair):
    ours, theirs = pair
    hub = StreamHub(max_queue=10)
    direct_stream(hub, ours, expires=1_000)  # UNIX seconds
    hub.deliver([(rooms.rooms_for("news", None), "999999-0", "{}", None),
                 (rooms.rooms_for("news", None), "1000001-0", "{}", None)])
    events = b"id: 999999-0\ndata: {}\n\n"
    assert received(theirs, len(chunk(events))) == chunk(events)
    nothing_more(theirs)


def test_a_stream_whose_peer_is_gone_is_ended(pair):
    ours, theirs = pair
    hub = StreamHub(max_queue=10)
    stream = direct_stream(hub, ours)
    theirs.close()
    hub.deliver([(rooms.rooms_for("news", None), "1-0", "{}", None)])
    assert stream.ended == "the connection is gone" and drain(stream) == [END]
    assert len(hub) == 0 and hub.written == 0
