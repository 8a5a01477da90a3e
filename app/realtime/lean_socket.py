"""Leaner Engine.IO connections: no greenlet of their own while idle.

python-engineio gives every websocket connection, besides the greenlet
that reads it, a writer greenlet that waits on the connection's queue for
its whole life, and a ping greenlet that sleeps between pings. Each
suspended greenlet keeps a copy of its stack: at thousands of idle
connections that is most of the server's memory per connection.

Here, a connection opened directly as a websocket whose socket has a
:class:`~app.realtime.server.LeanWriter` (every one, through the
``WebSocketTimeout`` middleware) gets instead:

- a *drainer*: a greenlet spawned when something is put in the
  connection's queue and no drainer is running, which writes what is
  queued and ends when the queue is empty (python-engineio's writer, but
  only for as long as there is something to write). The fan-out loop
  writes to idle connections itself (server.py), so most deliveries need
  no greenlet at all;
- pings from one :class:`PingWheel` per process instead of a sleeping
  greenlet per connection: the interval is the same for every connection,
  so a FIFO of due times is already in order.

Connections that start with long-polling keep python-engineio's way. Both
patches (``Socket._websocket_handler``, ``Socket.schedule_ping``) keep
python-engineio's contract; it is pinned in requirements.txt.
"""
import collections
import time

import gevent
from engineio import exceptions as eio_exceptions
from engineio.async_drivers import gevent as eio_gevent
from engineio import packet as eio_packet
from engineio import socket as eio_socket
from gevent.queue import Empty

_original_handler = eio_socket.Socket._websocket_handler
JOIN_SECONDS = 10  # at most, for a close that waits for the queue to be written


class DrainingQueue:
    """A connection's outgoing queue that starts its drainer when it is given something.

    Only the part of gevent's JoinableQueue that python-engineio and Herald
    use on a websocket connection, over a plain list (a gevent queue costs
    some 2.5 KiB, a deque 0.7 KiB, an empty list 56 bytes; what waits here
    is a few packets at most, so ``pop(0)`` is cheap). Nothing waits on
    it: ``get`` never blocks (only long-polling's ``poll`` would, and this
    queue only serves websockets).
    """

    __slots__ = ("socket", "queue", "drainer")

    def __init__(self, socket, items):
        self.socket = socket
        self.queue = []
        self.drainer = None
        for item in items:
            self.put(item)

    def put(self, item, block=True, timeout=None):
        self.queue.append(item)
        if self.drainer is None:
            self.drainer = gevent.spawn(self._drain)

    put_nowait = put

    def get_nowait(self):
        try:
            return self.queue.pop(0)
        except IndexError:
            raise Empty() from None

    def get(self, block=True, timeout=None):
        return self.get_nowait()

    def qsize(self):
        return len(self.queue)

    def empty(self):
        return not self.queue

    def task_done(self):
        pass

    def join(self, timeout=JOIN_SECONDS):
        """Wait (a bounded time) until what is queued has been written."""
        deadline = time.monotonic() + timeout
        while (self.queue or self.drainer is not None) and time.monotonic() < deadline:
            gevent.sleep(0.01)

    def _drain(self):
        ws = self.socket.lean_ws
        queue = self.queue
        try:
            while queue:
                pkt = queue.pop(0)
                if pkt is None:  # the connection is closing
                    queue.clear()
                    ws.close()
                    return
                ws.send(pkt.encode())
        except Exception:  # the peer is gone: python-engineio's writer also just closes
            ws.close()
        finally:
            self.drainer = None


def _lean_websocket_handler(self, ws):
    """python-engineio's websocket handler, less its writer greenlet (see the module)."""
    # ``ws`` is python-engineio's wrapper around gevent-websocket's WebSocket (``_sock``).
    writer = getattr(getattr(getattr(ws, "_sock", None), "raw_write", None), "__self__", None)
    if self.connected or getattr(writer, "raw", None) is None:
        return _original_handler(self, ws)  # an upgrade from polling, or no lean writer
    self.connected = True
    self.upgraded = True
    self.lean_ws = ws
    pending = []
    while self.queue.qsize():  # the OPEN packet, and anything sent since
        pending.append(self.queue.get_nowait())
        self.queue.task_done()
    self.queue = DrainingQueue(self, pending)
    limit = self.server.max_http_buffer_size
    while True:
        try:
            data = ws.wait()
        except Exception:  # a reset or a timeout: the connection is over
            break
        if data is None:  # closed by the client
            break
        if len(data) > limit:
            self.server.logger.info("%s: packet is too large; closing", self.sid)
            break
        try:
            self.receive(eio_packet.Packet(encoded_packet=data))
        except eio_exceptions.UnknownPacketError:
            pass
        except eio_exceptions.SocketIsClosedError:
            break
        except Exception:
            self.server.logger.exception("%s: receive error", self.sid)
            break
    self.queue.put(None)  # the drainer closes the websocket after what is queued
    drainer = self.queue.drainer
    if drainer is not None:
        drainer.join(timeout=5)
    self.close(wait=False, abort=True, reason=self.server.reason.TRANSPORT_CLOSE)
    return []


class PingWheel:
    """Sends every connection's pings from one greenlet (see the module)."""

    def __init__(self):
        self.due = collections.deque()  # (monotonic due time, socket), in due order
        self.runner = None

    def schedule(self, socket):
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


WHEEL = PingWheel()


def _schedule_ping(self):
    """python-engineio's ``schedule_ping``, through the process's PingWheel."""
    if self.last_ping:
        self.last_ping = None
        WHEEL.schedule(self)


def install():
    """Patch python-engineio's Socket (once per process; idempotent)."""
    eio_socket.Socket._websocket_handler = _lean_websocket_handler
    eio_socket.Socket.schedule_ping = _schedule_ping
    # The websocket wrapper is called as a bound method (no C level on the
    # reader's stack, see server.WebSocketTimeout).
    drivers = eio_gevent._async
    if not getattr(drivers["websocket"], "herald_bound", False):
        wrapper = drivers["websocket"]

        def bound_wrapper(handler, server):
            return wrapper(handler, server).__call__
        bound_wrapper.herald_bound = True
        drivers["websocket"] = bound_wrapper
