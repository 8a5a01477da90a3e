"""``RequestClock``: a request's reads, each bounded and all of them by one deadline.

pywsgi gives a connection's socket one timeout, which bounds each read on
its own: a request that sends one header line every 8 s against a 10 s
timeout was never cut off (still open after 180 s; 19,800 of them from
two addresses filled a process's connection budget, issue 35). This is the
raw stream under the handler's buffered reader: every read waits at most
``per_read`` seconds, and none past ``deadline`` (a monotonic time the
handler sets for each request: its head within REQUEST_TIMEOUT, its body
within that and the time its size takes at MIN_BODY_RATE). Past it, the
read raises :class:`TooSlow`, a ``TimeoutError``: pywsgi ends such a
connection as it does one whose single read timed out.
"""
import io
import socket
import time

MIN_BODY_RATE = 8 * 1024  # bytes per second a request's body must keep up, at least


class TooSlow(TimeoutError):
    """The request was not in by its deadline."""


class RequestClock(io.RawIOBase):
    """The socket ``sock``'s reads, each within ``per_read`` seconds and all before
    ``deadline`` (None: no deadline)."""

    def __init__(self, sock, per_read):
        super().__init__()
        self.sock = sock
        self.per_read = per_read
        self.deadline = None

    def readable(self):
        return True

    def readinto(self, buffer):
        deadline = self.deadline
        if deadline is None:
            return self.sock.recv_into(buffer)
        left = deadline - time.monotonic()
        if left <= 0:  # what had arrived by then is still read
            try:
                return self.sock._sock.recv_into(buffer, 0, socket.MSG_DONTWAIT)
            except OSError:  # (BlockingIOError: nothing more came in time)
                raise TooSlow("the request was not in by its deadline") from None
        if left >= self.per_read:
            return self.sock.recv_into(buffer)
        self.sock.settimeout(left)
        try:
            return self.sock.recv_into(buffer)
        except TimeoutError:
            raise TooSlow("the request was not in by its deadline") from None
        finally:
            self.sock.settimeout(self.per_read)

    def start(self, seconds, since=None):
        """The reads have ``seconds`` in all, from ``since`` (a time.monotonic()
        value; None: now)."""
        self.deadline = (time.monotonic() if since is None else since) + seconds

    def body(self, length, most):
        """The request's head is in: its body (``length`` bytes, or None when it is
        chunked: ``most`` at most) has REQUEST_TIMEOUT, and its size at MIN_BODY_RATE."""
        size = most if length is None else length
        self.start(self.per_read + size / MIN_BODY_RATE)
