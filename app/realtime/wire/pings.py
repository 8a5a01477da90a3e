"""Timers for many connections from one greenlet: every connection's pings, and deadlines.

python-engineio starts a greenlet per connection that sleeps a ping interval
and sends a ping, again after every pong: one suspended greenlet (a saved
stack) per idle connection. Every connection waits the same interval, so a
FIFO of due times is already in due order, and one greenlet can walk it.
The same holds for any fixed delay, such as the time a new connection has to
join Herald's namespace (app/realtime/server.py).

A wheel wakes once for everything due within ``GRAIN`` of the first due item: a
connection's ping (or check) may run up to a quarter of a second late, and a
process with 3,000 idle connections (120 pings a second) woke 143 times a
second instead of 242-250, each wake a context switch and a turn of the hub's
loop: 5.9% of a core instead of 6.7-7.3% (bench/idle_wakes.py).

Waits that stay in each connection's own greenlet (an event stream's
heartbeat) get the same effect from :func:`on_grain`: each one's timer ends
on a multiple of ``GRAIN``, so those due close together end in one turn of
the hub's loop.

A wheel of connections holds their session ids, not the connections, and
finds each again when its turn comes (``find``): a connection that ended is
freed at once, not kept (with its queue, buffers and session) until its turn
comes up to 25 s later, which under churn was ``sessions/s x 25 s`` ended
connections alive at any moment (bench/churn.py, issue 35). The id is the
string the session holds already: a wheel costs a connection nothing more
(a weak reference cost two objects a connection, 0.2 KiB of its 5.7).
"""
import collections
import math
import operator
import time

import gevent
from engineio import packet as eio_packet

GRAIN = 0.25  # seconds an item's turn may come late, so that turns close together come at once


def on_grain(delay, grain=GRAIN):
    """``delay`` lengthened (by less than ``grain``) to end at a multiple of ``grain`` on
    the hub's clock: the timers of many connections' waits (an event stream's heartbeat,
    app/realtime/sse_stream.py) then end together, in one turn of the hub's loop, one
    wake for all of them instead of one each."""
    now = gevent.get_hub().loop.now()
    return math.ceil((now + delay) / grain) * grain - now


class Wheel:
    """Calls ``action(item)`` ``delay`` seconds after ``schedule(item, delay)``, for
    many items, from one greenlet that exists only while something is due.
    ``delay`` must be the same for every item (that is what keeps the FIFO in order).
    With ``key`` and ``find``, the wheel holds ``key(item)`` and calls
    ``action(find(key))`` at its turn, skipping it when ``find`` finds nothing.
    A turn comes at most ``grain`` seconds late (see the module)."""

    def __init__(self, action, key=None, find=None, grain=GRAIN):
        self.action = action
        self.key, self.find = key, find
        self.grain = grain
        self.due = collections.deque()  # (monotonic due time, item or its key), in due order
        self.runner = None

    def schedule(self, item, delay):
        self.due.append((time.monotonic() + delay, item if self.key is None else self.key(item)))
        if self.runner is None:
            self.runner = gevent.spawn(self._run)

    def _run(self):
        try:
            while self.due:
                now = time.monotonic()
                while self.due and self.due[0][0] <= now:
                    _at, item = self.due.popleft()
                    if self.find is not None:
                        item = self.find(item)
                    if item is not None:
                        self.action(item)
                    # else the last one stays referenced from this frame while it sleeps
                    item = None
                if self.due:  # until the next is due, and what comes due soon after it
                    wait = self.due[0][0] - time.monotonic()
                    gevent.sleep(min(1.0, max(0.0, wait) + self.grain))
        finally:
            self.runner = None


def _ping(socket):
    """What python-engineio's ``Socket._send_ping`` does after its sleep."""
    if not socket.closing and not socket.closed:
        socket.last_ping = time.time()
        socket.send(eio_packet.Packet(eio_packet.PING))


class PingWheel(Wheel):
    """Sends the pings that python-engineio's ``Socket._send_ping`` would; ``find(sid)``:
    the open session of that id, or None."""

    def __init__(self, find, grain=GRAIN):
        super().__init__(_ping, key=operator.attrgetter("sid"), find=find, grain=grain)

    def schedule(self, socket, delay=None):
        """Ping ``socket`` one ping interval from now (what ``_send_ping`` sleeps)."""
        super().schedule(socket, socket.server.ping_interval if delay is None else delay)
