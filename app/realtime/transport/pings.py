"""``PingWheel``: every connection's Engine.IO pings, sent from one greenlet per process.

python-engineio starts a greenlet per connection that sleeps a ping interval
and sends a ping, again after every pong: one suspended greenlet (a saved
stack) per idle connection. The interval is the same for every connection,
so a FIFO of due times is already in due order, and one greenlet can walk it.
"""
import collections
import time

import gevent
from engineio import packet as eio_packet


class PingWheel:
    """Sends the pings that python-engineio's ``Socket._send_ping`` would."""

    def __init__(self):
        self.due = collections.deque()  # (monotonic due time, socket), in due order
        self.runner = None

    def schedule(self, socket):
        """Ping ``socket`` one ping interval from now (what ``_send_ping`` sleeps)."""
        self.due.append((time.monotonic() + socket.server.ping_interval, socket))
        if self.runner is None:
            self.runner = gevent.spawn(self._run)

    def _run(self):
        try:
            while self.due:
                now = time.monotonic()
                while self.due and self.due[0][0] <= now:
                    _at, socket = self.due.popleft()
                    if not socket.closing and not socket.closed:
                        socket.last_ping = time.time()
                        socket.send(eio_packet.Packet(eio_packet.PING))
                if self.due:
                    gevent.sleep(min(1.0, max(0.0, self.due[0][0] - time.monotonic())))
        finally:
            self.runner = None
