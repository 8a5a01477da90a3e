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
"""
from app.realtime.wire.writer import LeanWriter

CONNECTION = "herald.connection"  # environ key: the pywsgi handler serving the request


class DirectEvents:
    """Writes to one event stream's socket beside pywsgi (see the module): the hub
    (streams.py) writes through ``writer`` (its ``write_now``, ``busy`` and
    ``failed``), framed as ``handler.response_use_chunked`` says (:func:`frame`)."""

    __slots__ = ("handler", "writer")

    def __init__(self, handler):
        self.handler = handler
        self.writer = LeanWriter(handler.socket)

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
