"""Websocket frames as a client sends them (RFC 6455, 5.2), parsed from bytes already read.

gevent-websocket parses frames by reading from a stream, blocking for each
part; connection.py reads whatever has arrived, in the hub, and needs a
parser that says "not yet" instead. These are gevent-websocket's checks
(``Header.decode_header``, ``WebSocket.read_frame``, ``handle_close``), on
a buffer: a reserved bit, a fragmented or long control frame, a bad close
code are :class:`ProtocolError` (closed with 1002), a close reason that is
not UTF-8 too (1007); a frame over ``MAX_FRAME`` is refused before its
payload arrives (:class:`~.reader.FrameTooLarge`).

:class:`MessageParser` turns those frames into messages. Each Connection
holds one (its ``parser``) with the reading state, and nothing of the
connection's: the parser returns messages, and a peer's ping as the
:class:`Pong` to write; what ends the reading is raised (:class:`Over`,
:class:`PeerClosed`, :class:`ProtocolError`), and the connection decides
what to write and how to close.
"""
import struct

from app.realtime.wire.reader import MAX_FRAME, FrameTooLarge

TEXT, BINARY, CLOSE, PING, PONG = 0x1, 0x2, 0x8, 0x9, 0xA

__all__ = ["BINARY", "CLOSE", "PING", "PONG", "TEXT", "FrameTooLarge", "MessageParser", "Over",
           "PeerClosed", "Pong", "ProtocolError", "close_code", "frame", "parse_frame", "unmask"]


class ProtocolError(Exception):
    """A frame RFC 6455 forbids; the connection is closed with ``code``."""

    def __init__(self, code, why):
        super().__init__(why)
        self.code = code


class Over(Exception):
    """Reading this connection is over; its message, when it has one, says why (for the log)."""


class PeerClosed(Over):
    """The peer's close frame: answered with ``code`` and ``reason`` (see :func:`close_code`)."""

    def __init__(self, code, reason):
        super().__init__()
        self.code, self.reason = code, reason


class Pong:
    """A peer's ping, as :meth:`MessageParser.next_message` returns it: the ``frame``
    that answers it, for the connection to write."""

    __slots__ = ("frame",)

    def __init__(self, frame):
        self.frame = frame


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


def parse_frame(buf):
    """The first frame in ``buf`` (bytes) as (fin, opcode, unmasked payload, its
    end in ``buf``), or None while it is not all there."""
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
        raise FrameTooLarge(f"websocket frame of {length} bytes refused (at most {MAX_FRAME})")
    end = at + length
    if len(buf) < end:
        return None
    payload = buf[at:end]
    return fin, opcode, unmask(payload, mask) if mask else payload, end


def valid_close_code(code):
    """gevent-websocket's ``WebSocket._is_valid_close_code``."""
    return not (code < 1000 or 1004 <= code <= 1006 or 1012 <= code <= 1016 or code == 1100
                or 2000 <= code <= 2999)


def close_code(payload):
    """The (code, reason bytes) a peer's close frame is answered with (1000 for an
    empty one), as gevent-websocket's ``handle_close``."""
    if not payload:
        return 1000, b""
    if len(payload) < 2:
        raise ProtocolError(1002, "a close frame of one byte")
    code = struct.unpack("!H", payload[:2])[0]
    try:
        payload[2:].decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(1007, "a close reason that is not UTF-8") from None
    if not valid_close_code(code):
        raise ProtocolError(1002, f"invalid close code {code}")
    return code, payload[2:]


class MessageParser:
    """gevent-websocket's ``read_message``, on a buffer: a connection's reading
    state, held by connection.py's ``Connection`` as its ``parser``.

    ``feed`` it the bytes read; ``next_message(limit)`` returns the next whole
    message: a text one (str), a binary one (bytearray), a :class:`Pong` for a
    peer's ping (its frame for the connection to write), or None until more is
    read. It raises :class:`ProtocolError` for what RFC 6455 forbids,
    :class:`PeerClosed` for the peer's close frame, and :class:`Over` (why, for
    the log) for a frame or a fragmented message too large. Its own state, and
    nothing else (at thousands of idle connections, every slot counts):
    ``buffer``, the bytes not parsed yet; ``parts`` and ``opcode``, the
    fragments of a message being received and its opcode (0: none).
    Usage: ``parser.feed(data)``, then ``parser.next_message(limit)`` until it is None.
    """

    __slots__ = ("buffer", "parts", "opcode")

    def __init__(self):
        self.buffer = b""
        self.parts = None
        self.opcode = 0

    def feed(self, data):
        """Bytes read from the peer, after those not parsed yet."""
        self.buffer = self.buffer + data if self.buffer else data

    def next_message(self, limit):
        """The next whole message (see the class), or None; ``limit``: the largest
        Engine.IO packet accepted, of which a fragmented message may carry four
        times as much (or MAX_FRAME) before it is refused."""
        while True:
            buffer = self.buffer
            try:
                parsed = parse_frame(buffer)
            except FrameTooLarge as exc:
                raise Over(str(exc)) from None
            if parsed is None:
                return None
            fin, opcode, payload, end = parsed
            self.buffer = buffer[end:] if len(buffer) > end else b""
            if opcode == TEXT or opcode == BINARY:
                if self.opcode:
                    raise ProtocolError(1002, f"opcode {opcode} inside a fragmented message")
                if fin:  # a message in one frame (no larger than MAX_FRAME): no fragments kept
                    return _message(opcode, payload)
                self.opcode, self.parts = opcode, [payload]
            elif opcode == 0:
                if not self.opcode:
                    raise ProtocolError(1002, "a continuation frame with nothing to continue")
                self.parts.append(payload)
                if sum(map(len, self.parts)) > max(MAX_FRAME, 4 * limit):
                    raise Over("packet is too large")
                if fin:
                    opcode, data = self.opcode, b"".join(self.parts)
                    self.opcode, self.parts = 0, None
                    return _message(opcode, data)
            elif opcode == PING:
                return Pong(frame(payload, PONG))
            elif opcode == CLOSE:  # answered (with the peer's code when valid): over
                raise PeerClosed(*close_code(payload))
            elif opcode != PONG:
                raise ProtocolError(1002, f"unexpected opcode {opcode}")


def _message(opcode, data):
    """A whole message's ``data`` (bytes) as its reader gets it: BINARY a bytearray, TEXT a str."""
    if opcode == BINARY:
        return bytearray(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(1007, "text that is not UTF-8") from None
