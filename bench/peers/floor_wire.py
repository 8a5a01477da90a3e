"""The wire of the fan-out floor (bench/peers/floor.py): websocket frames, the
Socket.IO event that carries notifications, and a Redis subscription over a raw
socket with the least RESP parsing it needs. Kept apart so that floor.py holds
only the loop."""
import base64
import hashlib
import socket
import struct
from urllib.parse import urlsplit

CHANNEL = b"herald:live"
NAMESPACE = "/notifications"
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_key(head):
    """The ``Sec-WebSocket-Accept`` for an upgrade request's head (bytes, without the
    blank line), or None when it is not a websocket request for /socket.io/."""
    lines = head.decode("latin-1").split("\r\n")
    headers = dict((k.strip().lower(), v.strip()) for k, _, v in
                   (line.partition(":") for line in lines[1:]))
    key = headers.get("sec-websocket-key")
    if not lines[0].startswith("GET /socket.io/") or key is None:
        return None
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest())


def frame(payload, opcode=0x1):
    """One unmasked, final websocket frame around ``payload`` (bytes)."""
    size = len(payload)
    if size < 126:
        return bytes((0x80 | opcode, size)) + payload
    if size < 65536:
        return struct.pack("!BBH", 0x80 | opcode, 126, size) + payload
    return struct.pack("!BBQ", 0x80 | opcode, 127, size) + payload


def event(raws):
    """The websocket frame of the Socket.IO event carrying notifications (their JSON)."""
    body = raws[0] if len(raws) == 1 else b"[" + b",".join(raws) + b"]"
    name = b"notification" if len(raws) == 1 else b"notifications"
    return frame(b"42" + NAMESPACE.encode() + b',["' + name + b'",' + body + b"]")


def unmask(mask, data):
    size = len(data)
    key = (mask * (size // 4 + 1))[:size]
    return (int.from_bytes(data, "big") ^ int.from_bytes(key, "big")).to_bytes(size, "big")


# -- Redis: a subscription over a raw socket ---------------------------------------------

def subscribe(redis_url):
    """A socket subscribed to herald:live, the subscription confirmed, made non-blocking."""
    url = urlsplit(redis_url)
    sock = socket.create_connection((url.hostname or "127.0.0.1", url.port or 6379))
    if url.password:
        auth = [url.username, url.password] if url.username else [url.password]
        sock.sendall(command(b"AUTH", *(part.encode() for part in auth)))
    sock.sendall(command(b"SUBSCRIBE", CHANNEL))
    buffer, at = bytearray(), 0
    while True:
        parsed = resp(buffer, at)
        if parsed is None:
            chunk = sock.recv(65536)
            if not chunk:
                raise SystemExit("Redis closed the connection")
            buffer += chunk
            continue
        reply, at = parsed
        if isinstance(reply, Exception):
            raise SystemExit(f"Redis: {reply}")
        if isinstance(reply, list) and reply[0] == b"subscribe":
            break
    if at < len(buffer):
        raise SystemExit("unexpected data after the subscription's confirmation")
    sock.setblocking(False)
    return sock


def command(*parts):
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def resp(buffer, at):
    """One RESP value from ``buffer`` at ``at``: ``(value, next at)``, or None when
    incomplete. Bulk strings are bytes, errors Exceptions."""
    end = buffer.find(b"\r\n", at)
    if end < 0:
        return None
    kind, line = buffer[at], bytes(buffer[at + 1:end])
    at = end + 2
    if kind == 0x24:  # $ bulk string
        size = int(line)
        if size < 0:
            return None, at
        if len(buffer) < at + size + 2:
            return None
        return bytes(buffer[at:at + size]), at + size + 2
    if kind == 0x2A:  # * array
        items = []
        for _ in range(int(line)):
            parsed = resp(buffer, at)
            if parsed is None:
                return None
            item, at = parsed
            items.append(item)
        return items, at
    if kind == 0x3A:  # : integer
        return int(line), at
    if kind == 0x2D:  # - error
        return Exception(line.decode()), at
    return line, at  # + simple string
