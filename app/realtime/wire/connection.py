"""``Connection``: a websocket read by a libev watcher, with no greenlet of its own.

A greenlet blocked reading an idle connection keeps a copy of its stack, and
pywsgi keeps the request's environ and handler alive with it, for the
connection's whole life (bench/RESULTS.md). Once an Engine.IO websocket is
open, websocket.py hands its TCP socket to a :class:`Connection` and the
request's greenlet ends (handler.py, admission.py keep the socket open):

- a read watcher calls ``_readable`` in the hub when bytes arrive: what is
  there is read without blocking and handed to the connection's own
  :class:`~.inbound.MessageParser` (its ``parser``, the reading state), which
  returns frames as messages, with gevent-websocket's refusals; the
  connection answers pings and closes, and adds websocket.py's checks
  (a message over ``max_http_buffer_size``, a malformed Engine.IO packet);
- a PONG is handled in the hub (``Socket.receive`` only schedules the next
  ping); any other packet may block (a connect reads Redis): a short-lived
  greenlet handles it and whatever else is buffered, one at a time and in
  order, while reading pauses (TCP holds a busy client back, as before);
- writes go through the :class:`~.writer.LeanWriter` (the drainer's ``send``
  and ``close``, the fan-out loop's ``write_now``);
- a peer silent for ``timeout`` s (``WEBSOCKET_TIMEOUT``) is dropped, checked
  on a :class:`~.pings.Wheel` every quarter of it (the blocked ``recv``'s
  timeout did it before, with a gevent Timeout per connection);
- at the end a greenlet does what the reading loop and pywsgi did after it:
  the queue written (bounded), the Engine.IO socket closed with
  TRANSPORT_CLOSE (disconnect handlers run), the TCP socket closed, the web
  server's count released (``release``, from ``AdmittingServer.keep``).
"""
import logging
import struct
import time

import gevent
from engineio import exceptions as eio_exceptions
from engineio import packet as eio_packet

from app.realtime.wire import workers
from app.realtime.wire.inbound import (
    BINARY,
    CLOSE,
    TEXT,
    MessageParser,
    Over,
    PeerClosed,
    Pong,
    ProtocolError,
    frame,
)

log = logging.getLogger("herald.transport")
MALFORMED = (ValueError, IndexError, TypeError)  # what Packet(encoded_packet=...) raises

READ_CHUNK = 64 * 1024
DRAIN_SECONDS = 5  # at most, for what is queued to be written once the connection ends


class ConnectionClosed(OSError):
    """A send on a websocket already closed (the drainer stops at it)."""


class Connection:
    """One Engine.IO websocket, served from the hub (see the module).

    ``socket``: the Engine.IO socket; ``sock``: the gevent TCP socket (its fd is
    watched, and closed here at the end); ``writer``: its LeanWriter; ``parser``:
    its :class:`~.inbound.MessageParser` (the bytes read, as messages);
    ``release``: called once when the connection is over; ``silences``: the
    Wheel that checks, every ``timeout / 4`` seconds, that the peer was heard
    from within ``timeout`` seconds.
    """

    __slots__ = ("socket", "sock", "raw", "writer", "watcher", "parser", "closed", "ended",
                 "paused", "heard", "release", "silences", "timeout")

    def __init__(self, socket, sock, writer, release, silences, timeout):
        self.socket = socket
        self.sock = sock
        self.raw = sock._sock  # the non-blocking socket under gevent's
        self.writer = writer
        self.release = release
        self.silences = silences
        self.timeout = timeout
        self.watcher = None
        self.parser = MessageParser()
        self.closed = False  # a close frame was sent (nothing is sent after it)
        self.ended = False  # reading is over; the connection is being closed
        self.paused = False  # a greenlet is handling a packet: the watcher is stopped
        self.heard = time.monotonic()

    def start(self):
        """Start reading from the hub."""
        self.watcher = gevent.get_hub().loop.io(self.raw.fileno(), 1)
        self.watcher.start(self._readable)
        self.silences.schedule(self, self.timeout / 4)

    # -- what the DrainingQueue's drainer calls (as on gevent-websocket's WebSocket)

    def send(self, message):
        """Write one Engine.IO packet's encoding (``str``: a text frame), blocking
        this greenlet as needed."""
        if self.closed:
            raise ConnectionClosed("the websocket is closed")
        self.writer.write(_frame_of(message))

    def send_many(self, messages):
        """:meth:`send` for several packets' encodings, their frames in one write."""
        if self.closed:
            raise ConnectionClosed("the websocket is closed")
        self.writer.write(b"".join(_frame_of(message) for message in messages))

    def close(self, code=1000, message=b""):
        """Send a close frame (once); what the peer sends is still read until it
        closes or goes silent."""
        if self.closed:
            return
        self.closed = True
        try:
            self.writer.write(frame(struct.pack("!H", code) + message, CLOSE))
        except OSError:
            pass  # the peer is gone: the connection ends when that is read

    # -- reading, in the hub

    def _readable(self):
        try:
            data = self.raw.recv(READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._end()
            return
        if not data:
            self._end()
            return
        self.heard = time.monotonic()
        self.parser.feed(data)
        try:
            self._consume(inline=True)
        except Exception:  # never let one connection's surprise reach the hub
            log.exception("%s: read error", self.socket.sid)
            self._end()

    def _consume(self, inline):
        """Handle every packet buffered; in the hub (``inline``) only PONGs, handing
        the first other packet to a greenlet (reading pauses until it is done)."""
        while not self.ended:
            try:
                pkt = self._next_packet()
            except ProtocolError as exc:
                log.info("%s: websocket protocol error (%s); closing", self.socket.sid, exc)
                self._end(exc.code)
                return
            except PeerClosed as closed:  # answered with the peer's code when valid
                self._end(closed.code, closed.reason)
                return
            except Over as over:
                if over.args:
                    log.info("%s: %s; closing", self.socket.sid, over)
                self._end()
                return
            if pkt is None:
                return
            if inline and pkt.packet_type != eio_packet.PONG:
                self.paused = True
                self.watcher.stop()
                workers.spawn(self._dispatch, pkt)
                return
            self._receive(pkt)

    def _dispatch(self, pkt):
        try:
            self._receive(pkt)
            self._consume(inline=False)
        except Exception:
            log.exception("%s: receive error", self.socket.sid)
            self._end()
        finally:
            self.paused = False
            if not self.ended:
                self.heard = time.monotonic()  # its silence counts from here
                self.watcher.start(self._readable)

    def _receive(self, pkt):
        """What websocket.py's reading loop does with a packet."""
        socket = self.socket
        try:
            socket.receive(pkt)
        except eio_exceptions.UnknownPacketError:
            pass
        except eio_exceptions.SocketIsClosedError:
            self._end()
            return
        except Exception:
            log.exception("%s: receive error", socket.sid)
            self._end()
            return
        if socket.closed:  # cut off (a flood, a bad packet): read nothing more of it
            self._end()

    def _next_packet(self):
        """The next whole Engine.IO packet the parser has, or None until more is read;
        pings are answered on the way."""
        server = self.socket.server
        limit = server.max_http_buffer_size
        while True:
            message = self.parser.next_message(limit)
            if message is None:
                return None
            if message.__class__ is Pong:
                workers.spawn(self._write_control, message.frame)
                continue
            if len(message) > limit:
                raise Over("packet is too large")
            try:
                return eio_packet.Packet(encoded_packet=message)
            except MALFORMED as exc:
                server.refused_packets += 1
                log.warning("%s: malformed Engine.IO packet (%s); closing", self.socket.sid,
                            exc.__class__.__name__)
                raise Over() from None

    def _write_control(self, data):
        if not self.closed:
            try:
                self.writer.write(data)
            except OSError:
                pass

    # -- the end

    def silent(self):
        """True when nothing was read from the peer for ``timeout`` seconds, and
        reading is not paused (a packet being handled may take its time, as it
        did in the reading loop, where no read was waiting meanwhile)."""
        return not self.paused and time.monotonic() - self.heard >= self.timeout

    def _end(self, code=None, reason=b""):
        """Stop reading; a greenlet closes the connection (sending close ``code``
        first, when given)."""
        if self.ended:
            return
        self.ended = True
        if self.watcher is not None:
            self.watcher.stop()
        workers.spawn(self._finish, code, reason)

    def _finish(self, code, reason):
        """What websocket.py's reading loop did once it ended, and pywsgi after it."""
        socket = self.socket
        try:
            if code is not None:
                self.close(code, reason)
            socket.queue.put(None)  # the drainer closes the websocket after what is queued
            drainer = getattr(socket.queue, "drainer", None)
            if drainer is not None:
                drainer.join(timeout=DRAIN_SECONDS)
            socket.close(wait=False, abort=True, reason=socket.server.reason.TRANSPORT_CLOSE)
            sessions = socket.server.sockets
            if sessions.get(socket.sid) is socket:  # as python-engineio's _handle_connect
                del sessions[socket.sid]
        except Exception:
            log.exception("%s: error closing", socket.sid)
        finally:
            self.closed = True
            try:
                self.raw.recv(16384)  # as pywsgi: what was sent is read, so no RST
            except OSError:
                pass
            if self.watcher is not None:
                self.watcher.close()
                self.watcher = None  # its callback is bound to this connection: a cycle
            close_queue = getattr(socket.queue, "close", None)
            if close_queue is not None:
                close_queue()  # the queue's reference to this connection: a cycle
            self.sock.close()
            release, self.release = self.release, None
            if release is not None:
                release()


def connection_sid(connection):
    """What the silences wheel holds of ``connection``: its session's id (pings.py)."""
    return connection.socket.sid


def check_silence(connection):
    """The silences wheel's action: drop ``connection`` once its peer has been silent
    for its timeout, else look again a quarter of it later."""
    if connection.ended:
        return
    if connection.silent():
        log.info("%s: nothing read for %s s; closing", connection.socket.sid, connection.timeout)
        connection._end()
    else:
        connection.silences.schedule(connection, connection.timeout / 4)


def _frame_of(message):
    """The websocket frame of one Engine.IO packet's encoding (``str``: a text frame)."""
    return frame(message.encode(), TEXT) if isinstance(message, str) else frame(bytes(message), BINARY)
