"""``LeanWriter``: everything written to one websocket's TCP socket goes through here.

The fan-out loop may then write a whole frame to an idle connection itself,
with one non-blocking ``send`` (``write_now``), no greenlet woken; whatever
the kernel does not take at once is finished by a short task (a kept worker: workers.py), and
until it has, the connection is ``busy`` and everything else waits its turn
in the connection's queue.

``write`` is what gevent-websocket's ``WebSocket.raw_write`` becomes (see
handler.py): one ``send``, and ``sendall`` only for a rest. gevent's own
``sendall`` asks the kernel for the socket's buffer size on every call, a
``getsockopt`` per frame per client: a quarter of the server's time under
fan-out before this.
"""
from app.realtime.wire import workers


class LeanWriter:
    """The writing side of one websocket's TCP socket (``sock``, a gevent socket)."""

    __slots__ = ("sock", "raw", "busy", "finisher", "failed")

    def __init__(self, sock):
        self.sock = sock
        self.raw = getattr(sock, "_sock", None)  # the non-blocking socket under gevent's
        self.busy = False
        self.finisher = None
        self.failed = False  # a direct write failed: the peer is gone or stopped reading

    def write(self, data):
        """Write ``data`` whole, blocking this greenlet as needed (the queue's drainer)."""
        if self.finisher is not None:
            self.finisher.join()
        self.busy = True
        try:
            sent = self.sock.send(data)
            if sent < len(data):
                self.sock.sendall(memoryview(data)[sent:])
        finally:
            self.busy = False

    def write_now(self, frame):
        """Start writing ``frame`` without blocking (the fan-out loop's way)."""
        try:
            sent = self.raw.send(frame)
        except BlockingIOError:
            sent = 0
        except OSError:
            self.failed = True
            return  # the connection is gone; its reader notices and closes it
        if sent < len(frame):
            self.busy = True
            self.finisher = workers.spawn(self._finish, memoryview(frame)[sent:])

    def _finish(self, rest):
        try:
            self.sock.sendall(rest)
        except OSError:
            self.failed = True  # as above: the reader ends the connection
        finally:
            self.busy = False
            self.finisher = None
