"""The fan-out's kept lists of a room's members (app/realtime/wire/fanout.py,
``FanOut.recipients``; dropped by app/realtime/wire/manager.py as a room changes).

Real python-socketio manager, real LeanWriters over real (gevent) socket pairs:
what each connection's peer reads is what the fan-out wrote to it.
"""
import gevent.socket
import pytest
import socketio

from app.realtime.wire.fanout import FanOut
from app.realtime.wire.manager import IndexedManager
from app.realtime.wire.writer import LeanWriter

NS = "/notifications"


class EmptyQueue:
    """Nothing waits: every write goes straight out (the fan-out's idle path)."""

    def qsize(self):
        return 0


class Connection:
    """An Engine.IO socket as the fan-out sees it, its writer on one end of a socket
    pair; ``received()`` is what reached the other end."""

    def __init__(self, eio_sid):
        self.sid = eio_sid
        self.closing = self.closed = False
        self.ours, self.peer = gevent.socket.socketpair()
        self.lean_writer = LeanWriter(self.ours)
        self.queue = EmptyQueue()

    def received(self):
        self.peer.setblocking(False)
        try:
            return self.peer.recv(1 << 16).decode(errors="replace")
        except BlockingIOError:
            return ""

    def end(self):
        self.ours.close()
        self.peer.close()


class Engine:
    """What the manager and the fan-out ask of python-engineio's server."""

    def __init__(self):
        self.sockets = {}
        self.ids = iter(f"sid{n}" for n in range(1000))

    def generate_id(self):
        return next(self.ids)


@pytest.fixture
def world():
    engine = Engine()
    manager = IndexedManager()
    manager.set_server(type("Server", (), {"eio": engine,
                                           "packet_class": socketio.packet.Packet})())
    fanout = FanOut(manager, engine, 1000, shed=None)
    made = []

    def connect(eio_sid, *rooms):
        connection = Connection(eio_sid)
        engine.sockets[eio_sid] = connection
        sid = manager.connect(eio_sid, NS)
        for room in rooms:
            manager.enter_room(sid, NS, room)
        made.append(connection)
        return sid, connection

    yield manager, fanout, connect
    for connection in made:
        connection.end()


def test_whoever_enters_or_leaves_a_room_is_counted_at_the_next_notification(world):
    """A kept list that outlived a change would send to a connection that left (an
    unsubscribe, a revoked token's disconnect) or miss one that joined."""
    manager, fanout, connect = world
    ann_sid, ann = connect("e-ann", "t:a")
    bob_sid, bob = connect("e-bob", "t:a")
    fanout.fan_out(NS, ["t:*", "t:a"], '{"n":1}')
    assert '{"n":1}' in ann.received() and '{"n":1}' in bob.received()

    carl_sid, carl = connect("e-carl", "t:a")
    fanout.fan_out(NS, ["t:*", "t:a"], '{"n":2}')
    assert [('{"n":2}' in c.received()) for c in (ann, bob, carl)] == [True, True, True]

    manager.leave_room(bob_sid, NS, "t:a")
    fanout.fan_out(NS, ["t:*", "t:a"], '{"n":3}')
    assert [('{"n":3}' in c.received()) for c in (ann, bob, carl)] == [True, False, True]

    manager.disconnect(ann_sid, NS)
    fanout.fan_out(NS, ["t:*", "t:a"], '{"n":4}')
    assert [('{"n":4}' in c.received()) for c in (ann, bob, carl)] == [False, False, True]
    # Nothing kept holds the ended connection (its memory goes with it).
    assert all(ann is not socket for members in manager.kept.values() for _, socket in members)
    assert fanout.deliveries == 2 + 3 + 2 + 1


def test_a_connection_in_several_of_the_rooms_gets_the_notification_once(world):
    manager, fanout, connect = world
    _, both = connect("e-both", "t:*", "t:a")
    _, star = connect("e-star", "t:*")
    fanout.fan_out(NS, ["t:*", "t:a"], '{"n":1}')
    assert both.received().count('{"n":1}') == 1
    assert star.received().count('{"n":1}') == 1
    fanout.fan_out_many(NS, [(["t:*", "t:a"], '{"n":2}', None), (["t:*"], '{"n":3}', None)])
    got = both.received()
    assert got.count('{"n":2}') == 1 and got.count('{"n":3}') == 1
    assert fanout.deliveries == 2 + 2 + 2


def test_topics_nobody_follows_keep_nothing(world):
    """Topics are unbounded (an id in each, say): only rooms with members are kept,
    so the fan-out keeps no more than the manager's own tables."""
    manager, fanout, connect = world
    _, ann = connect("e-ann", "t:*")
    for n in range(200):
        fanout.fan_out(NS, ["t:*", "t:orders", f"t:orders.{n}"], f'{{"n":{n}}}')
    assert set(manager.kept) <= {(NS, room) for room in manager.rooms[NS]}
    assert (NS, "t:*") in manager.kept
    assert ann.received().count('"n":') == 200
