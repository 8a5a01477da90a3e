"""``Connection``: a websocket read by a libev watcher, with no greenlet of its own.

A greenlet blocked reading an idle connection keeps a copy of its stack, and
pywsgi keeps the request's environ and handler alive with it, for the
connection's whole life: at thousands of idle connections that was ~8 KiB
of the 25 KiB each one cost (bench/RESULTS.md). Once an Engine.IO websocket
is open, websocket.py hands its TCP socket to a :class:`Connection`, and the
greenlet pywsgi served the request in ends (handler.py keeps the socket open
for it). From then on:

- a read watcher (``loop.io(fd, READ)``) calls :meth:`Connection._readable`
  in the hub when bytes arrive: it reads what is there without blocking and
  parses websocket frames incrementally (RFC 6455: masking, fragmentation,
  ping, pong and close frames), as gevent-websocket's ``read_message`` does,
  with the same refusals (a reserved bit, an unknown opcode, a fragmented or
  long control frame: closed with 1002; text that is not UTF-8: 1007; a
  frame over ``MAX_FRAME``: dropped) and the same checks as websocket.py's
  reading loop (a message over ``max_http_buffer_size``, a malformed Engine.IO
  packet);
- an Engine.IO PONG is handled in the hub (``Socket.receive`` only schedules
  the next ping on the wheel); any other packet may block (a Socket.IO
  connect reads Redis), so it is handed to a short-lived greenlet, and
  reading pauses until that greenlet has dealt with it and with whatever
  else is already buffered: packets are handled one at a time and in order,
  and a busy client is held back by TCP, as the reading loop did;
- writes go through the connection's :class:`~.writer.LeanWriter`, from the
  :class:`~.queues.DrainingQueue`'s drainer (``send``, ``close``) or the
  fan-out loop (``write_now``);
- a peer that has sent nothing (not even a pong) for ``timeout`` seconds
  (``WEBSOCKET_TIMEOUT``) is dropped: its last read is checked on a
  :class:`~.pings.Wheel` every quarter of that, where the socket's timeout
  on a blocked ``recv`` used to do it (and cost a gevent Timeout each);
- when the connection ends (the peer closed, a refusal, the timeout), a
  greenlet does what the reading loop did after it: what is queued is
  written (bounded), the Engine.IO socket is closed with TRANSPORT_CLOSE
  (Socket.IO's disconnect handlers run), the TCP socket is closed, and the
  web server's count of open connections is released (``release``,
  from :meth:`~.admission.AdmittingServer.keep`).
"""
import logging
import struct
import time

import gevent
from engineio import exceptions as eio_exceptions
from engineio import packet as eio_packet

from app.realtime.wire.reader import MAX_FRAME

log = logging.getLogger("herald.transport")
MALFORMED = (ValueError, IndexError, TypeError)  # what Packet(encoded_packet=...) raises

READ_CHUNK = 64 * 1024
DRAIN_SECONDS = 5  # at most, for what is queued to be written once the connection ends
TEXT, BINARY, CLOSE, PING, PONG = 0x1, 0x2, 0x8, 0x9, 0xA


class ProtocolError(Exception):
    """A frame RFC 6455 forbids; the connection is closed with ``code``."""

    def __init__(self, code, why):
        super().__init__(why)
        self.code = code


class Over(Exception):
    """Reading this connection is over (its close frame, if any, is decided)."""


class ConnectionClosed(OSError):
    """A send on a websocket already closed (the drainer stops at it)."""


def frame(payload, opcode):
    """One unmasked, final websocket frame of ``opcode`` around ``payload`` (bytes)."""
    size = len(payload)
    if size < 126:
        return bytes((0x80 | opcode, size)) + payload
    if size < 65536:
        return struct.pack("!BBH", 0x80 | opcode, 126, size) + payload
    return struct.pack("!BBQ", 0x80 | opcode, 127, size) + payload


def unmask(payload, mask):
    """``payload`` XORed with the 4-byte ``mask`` repeated (one big-integer XOR)."""
    size = len(payload)
    if not size:
        return b""
    key = (mask * (size // 4 + 1))[:size]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(size, "big")


def valid_close_code(code):
    """gevent-websocket's ``WebSocket._is_valid_close_code``."""
    return not (code < 1000 or 1004 <= code <= 1006 or 1012 <= code <= 1016 or code == 1100
                or 2000 <= code <= 2999)


class Connection:
    """One Engine.IO websocket, served from the hub (see the module).

    ``socket``: the Engine.IO socket; ``sock``: the gevent TCP socket (its fd is
    watched, and closed here at the end); ``writer``: its LeanWriter;
    ``release``: called once when the connection is over; ``silences``: the
    Wheel that checks, every ``timeout / 4`` seconds, that the peer was heard
    from within ``timeout`` seconds.
    """

    __slots__ = ("socket", "sock", "raw", "writer", "watcher", "buffer", "parts", "opcode",
                 "closed", "ended", "paused", "heard", "release", "silences", "timeout")

    def __init__(self, socket, sock, writer, release, silences, timeout):
        self.socket = socket
        self.sock = sock
        self.raw = sock._sock  # the non-blocking socket under gevent's
        self.writer = writer
        self.release = release
        self.silences = silences
        self.timeout = timeout
        self.watcher = None
        self.buffer = b""
        self.parts = None  # the fragments of a message being received
        self.opcode = 0
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
        if isinstance(message, str):
            self.writer.write(frame(message.encode(), TEXT))
        else:
            self.writer.write(frame(bytes(message), BINARY))

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
        self.buffer = self.buffer + data if self.buffer else data
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
            except Over:
                self._end()
                return
            if pkt is None:
                return
            if inline and pkt.packet_type != eio_packet.PONG:
                self.paused = True
                self.watcher.stop()
                gevent.spawn(self._dispatch, pkt)
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
        """The next whole Engine.IO packet in the buffer, or None until more is read;
        control frames are answered on the way."""
        while True:
            message = self._next_message()
            if message is None:
                return None
            server = self.socket.server
            if len(message) > server.max_http_buffer_size:
                log.info("%s: packet is too large; closing", self.socket.sid)
                raise Over()
            try:
                return eio_packet.Packet(encoded_packet=message)
            except MALFORMED as exc:
                server.refused_packets += 1
                log.warning("%s: malformed Engine.IO packet (%s); closing", self.socket.sid,
                            exc.__class__.__name__)
                raise Over() from None

    def _next_message(self):
        """gevent-websocket's ``read_message``, on what is buffered: a text message
        (str), a binary one (bytearray), or None until more is read."""
        while True:
            parsed = self._next_frame()
            if parsed is None:
                return None
            fin, opcode, payload = parsed
            if opcode in (TEXT, BINARY):
                if self.opcode:
                    raise ProtocolError(1002, f"opcode {opcode} inside a fragmented message")
                self.opcode, self.parts = opcode, [payload]
            elif opcode == 0:
                if not self.opcode:
                    raise ProtocolError(1002, "a continuation frame with nothing to continue")
                self.parts.append(payload)
            elif opcode == PING:
                gevent.spawn(self._write_control, frame(payload, PONG))
                continue
            elif opcode == PONG:
                continue
            elif opcode == CLOSE:
                self._closed_by_peer(payload)
            else:
                raise ProtocolError(1002, f"unexpected opcode {opcode}")
            if sum(map(len, self.parts)) > max(MAX_FRAME, 4 * self.socket.server.max_http_buffer_size):
                log.info("%s: packet is too large; closing", self.socket.sid)
                raise Over()
            if not fin:
                continue
            opcode, data = self.opcode, b"".join(self.parts)
            self.opcode, self.parts = 0, None
            if opcode == BINARY:
                return bytearray(data)
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                raise ProtocolError(1007, "text that is not UTF-8") from None

    def _next_frame(self):
        """(fin, opcode, unmasked payload) of the next whole frame, or None."""
        buf = self.buffer
        if len(buf) < 2:
            return None
        first, second = buf[0], buf[1]
        fin, opcode, length = first & 0x80, first & 0x0F, second & 0x7F
        if opcode > 0x07:
            if not fin:
                raise ProtocolError(1002, "a fragmented control frame")
            if length > 125:
                raise ProtocolError(1002, "a control frame longer than 125 bytes")
        at = 2
        if length == 126:
            if len(buf) < 4:
                return None
            length, at = struct.unpack_from("!H", buf, 2)[0], 4
        elif length == 127:
            if len(buf) < 10:
                return None
            length, at = struct.unpack_from("!Q", buf, 2)[0], 10
        mask = None
        if second & 0x80:
            if len(buf) < at + 4:
                return None
            mask, at = buf[at:at + 4], at + 4
        if first & 0x70:
            raise ProtocolError(1002, "a reserved bit set")
        if length > MAX_FRAME:
            log.info("%s: websocket frame of %d bytes refused (at most %d); closing",
                     self.socket.sid, length, MAX_FRAME)
            raise Over()
        end = at + length
        if len(buf) < end:
            return None
        payload = buf[at:end]
        self.buffer = buf[end:] if len(buf) > end else b""
        return fin, opcode, unmask(payload, mask) if mask else payload

    def _closed_by_peer(self, payload):
        """gevent-websocket's ``handle_close``: the close answered (with the peer's
        code when valid), and reading over."""
        if not payload:
            self._end(1000)
            raise Over()
        if len(payload) < 2:
            raise ProtocolError(1002, "a close frame of one byte")
        code = struct.unpack("!H", payload[:2])[0]
        try:
            reason = payload[2:].decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError(1007, "a close reason that is not UTF-8") from None
        if not valid_close_code(code):
            raise ProtocolError(1002, f"invalid close code {code}")
        self._end(code, reason.encode())
        raise Over()

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
        gevent.spawn(self._finish, code, reason)

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
            self.sock.close()
            release, self.release = self.release, None
            if release is not None:
                release()


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
