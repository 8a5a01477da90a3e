"""``DirectEvents``: an event stream's socket, written to from the fan-out loop.

An event stream (``GET /api/stream``) is a pywsgi response whose body is a
generator: each notification used to wake the stream's greenlet through its
queue, to be yielded, chunk-framed and written by pywsgi; at 20,000
deliveries a second that was 3.8x the websocket path's CPU per delivery.
Like a websocket (writer.py), an idle stream (its greenlet parked on an
empty queue, nothing being written) is now written to by the relay's
fan-out loop itself: the same bytes pywsgi would write (a chunk of
``Transfer-Encoding: chunked`` when the response uses it), with one
non-blocking ``send``, no greenlet woken. What the kernel does not take at
once is finished by the writer's short-lived greenlet; until then the stream
is busy and what follows waits in its queue, and the stream's own greenlet
waits for that rest (:meth:`wait`) before pywsgi writes anything of its own,
so bytes never interleave.

pywsgi's handler is reached through the environ (``herald.connection``, set by
handler.py for the request's life); under any other server the key is
absent and a stream is written by its greenlet alone, as before.

A client that closes its stream is noticed at once (:meth:`DirectEvents.watch`):
a read watcher on the socket, in the hub, as a websocket's (connection.py),
sees its end of file, where an idle stream would otherwise learn of it only
at its next write (a heartbeat, 15 s on), holding its place in the client
address's count of sessions (per_address.py) and its user online meanwhile.
"""
import socket

import gevent

from app.realtime.wire.writer import LeanWriter

CONNECTION = "herald.connection"  # environ key: the pywsgi handler serving the request


class DirectEvents:
    """Writes to one event stream's socket beside pywsgi (see the module): the hub
    (sse_hub.py) writes through ``writer`` (its ``write_now``, ``busy`` and
    ``failed``), framed as ``handler.response_use_chunked`` says (:func:`frame`)."""

    __slots__ = ("handler", "writer", "watcher")

    def __init__(self, handler):
        self.handler = handler
        self.writer = LeanWriter(handler.socket)
        self.watcher = None

    def watch(self, gone):
        """Call ``gone()`` (in a greenlet of its own) once the client has closed the
        connection or reset it. An event stream's client sends nothing after its
        request, so the socket turns readable only then; anything else it sends is
        left for pywsgi, and watching stops (the next write tells, as before)."""
        raw = self.writer.raw
        if raw is None or self.watcher is not None:
            return
        watcher = self.watcher = gevent.get_hub().loop.io(raw.fileno(), 1)

        def readable():
            try:
                ended = not raw.recv(1, socket.MSG_PEEK)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # reset
                ended = True
            self.unwatch()
            if ended:
                gevent.spawn(gone)
        watcher.start(readable)

    def unwatch(self):
        """Stop watching (before the socket is closed: its descriptor may be reused)."""
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()
            watcher.close()

    @classmethod
    def of(cls, environ):
        """The stream's direct writer, or None when not served by Herald's handler."""
        handler = environ.get(CONNECTION)
        return cls(handler) if handler is not None and handler.socket is not None else None

    def wait(self):
        """Block until a rest of a direct write is out (before pywsgi writes)."""
        finisher = self.writer.finisher
        if finisher is not None:
            finisher.join()


def frame(data, chunked):
    """``data`` as pywsgi writes a body's piece: one chunk (size, data, CRLF) or as is."""
    if not chunked:
        return data
    return b"%x\r\n" % len(data) + data + b"\r\n"
