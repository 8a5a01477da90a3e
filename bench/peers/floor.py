"""The fan-out floor: the least a server must do to relay Redis pub/sub to websockets.

What Herald's fan-out is measured against (bench/fanout.py ``--servers herald,floor``).
One thread, one ``selectors`` (epoll) loop, non-blocking sockets, nothing else: no
gevent, no python-socketio, no logging, no per-client task. It speaks just enough
Engine.IO v4 / Socket.IO v5 over a websocket for bench/loadgen.js:

- ``GET /socket.io/?EIO=4&transport=websocket`` upgraded (RFC 6455), then the open
  packet ``0{...}`` with a long ``pingInterval`` (a ``2`` is sent to every client
  that often; their ``3`` is ignored);
- ``40/notifications,{token}`` answered ``40/notifications,{"sid":..}`` (any token);
- ``42/notifications,N["subscribe",{"topics":[..]}]`` answered
  ``43/notifications,N[{"ok":true,"topics":[..]}]``.

It subscribes to ``herald:live`` itself (raw socket, RESP parsed here, in the same
loop), as Herald's relay does. For each public notification there, the clients
subscribed to a prefix of its topic (``*``, ``a``, ``a.b``, ...: app.stream.envelope's
rule) are found once, the event ``42/notifications,["notification",<the JSON as Redis
delivered it>]`` and its websocket frame are built ONCE, and each client gets one
non-blocking ``send`` of it. What the kernel does not take is kept in that client's
buffer, in order, and written when its socket is writable; later frames join the
buffer. Nothing is dropped.

    REDIS_URL=redis://127.0.0.1:6379 PORT=5102 python bench/peers/floor.py

Prints ``listening`` on stdout once both its port and its subscription are live.
"""
import base64
import json
import os
import selectors
import socket
import struct
import time

from floor_wire import CHANNEL, NAMESPACE, accept_key, event, frame, resp, subscribe, unmask

PING_INTERVAL, PING_TIMEOUT = 300_000, 60_000  # ms: no ping is due within a bench run
BATCH_MAX = 100  # notifications in one frame at most (Herald's follower's BATCH_MAX)
READ, WRITE = selectors.EVENT_READ, selectors.EVENT_READ | selectors.EVENT_WRITE


class Client:
    """One connection: its socket, what it sent not yet read, what waits to be written."""

    __slots__ = ("sock", "send", "inbuf", "out", "upgraded", "fragments", "topics", "sid")

    def __init__(self, sock):
        self.sock, self.send = sock, sock.send
        self.inbuf = bytearray()
        self.out = None  # bytearray of what the kernel has not taken yet, in order
        self.upgraded = False
        self.fragments = None
        self.topics = set()
        self.sid = base64.urlsafe_b64encode(os.urandom(12)).decode()


class Floor:
    def __init__(self, redis_url, port):
        self.selector = selectors.DefaultSelector()
        self.rooms = {}  # topic prefix -> set of Clients
        self.clients = set()
        self.listener = socket.create_server(("127.0.0.1", port), backlog=4096)
        self.listener.setblocking(False)
        self.selector.register(self.listener, READ, None)
        self.redis = subscribe(redis_url)
        self.redis_buffer = bytearray()
        self.selector.register(self.redis, READ, "redis")

    # -- the loop -------------------------------------------------------------------

    def run(self):
        next_ping = time.monotonic() + PING_INTERVAL / 1000
        ping = frame(b"2")
        while True:
            for key, events in self.selector.select(max(0.0, next_ping - time.monotonic())):
                client = key.data
                if client is None:
                    self.accept()
                elif client == "redis":
                    self.read_redis()
                else:
                    if events & selectors.EVENT_WRITE and client.out:
                        self.flush(client)
                    if events & selectors.EVENT_READ:
                        self.read(client)
            if time.monotonic() >= next_ping:
                next_ping += PING_INTERVAL / 1000
                for client in list(self.clients):
                    if client.upgraded:
                        self.write(client, ping)

    def accept(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except BlockingIOError:
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client = Client(sock)
            self.clients.add(client)
            self.selector.register(sock, READ, client)

    def close(self, client):
        if client not in self.clients:
            return
        self.clients.discard(client)
        for topic in client.topics:
            self.rooms[topic].discard(client)
        self.selector.unregister(client.sock)
        client.sock.close()

    # -- writing: one send, the rest buffered (send_all) ----------------------------------

    def write(self, client, data):
        self.send_all((client,), data)

    def flush(self, client):
        try:
            sent = client.send(client.out)
        except BlockingIOError:
            return
        except OSError:
            self.close(client)
            return
        del client.out[:sent]
        if not client.out:
            client.out = None
            self.selector.modify(client.sock, READ, client)

    # -- fan-out ---------------------------------------------------------------------

    def fan_out(self, raws):
        """Notifications that arrived together (``raws``: their JSON from herald:live, in
        order) to every client subscribed to a prefix of their topics, once each, in one
        frame per client: ``notification`` for one, else ``notifications`` with the list
        of those for that client (as Herald's relay batches what arrives together)."""
        wanted = {}  # the prefixes with subscribers a notification has -> its raws' indexes
        for index, raw in enumerate(raws):
            envelope = json.loads(raw)
            if envelope.get("user"):
                continue  # private: no users here (any token), so nobody's
            parts = envelope["topic"].split(".")
            prefixes = tuple(p for p in ["*"] + [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
                             if self.rooms.get(p))
            if prefixes:
                wanted.setdefault(prefixes, []).append(index)
        if len(wanted) == 1:  # all for the same rooms: one frame for all of them
            [(prefixes, indexes)] = wanted.items()
            self.send_all(self.recipients(prefixes), event([raws[i] for i in indexes]))
            return
        mine = {}  # client -> the indexes of its raws
        for prefixes, indexes in wanted.items():
            for client in self.recipients(prefixes):
                mine.setdefault(client, []).extend(indexes)
        frames = {}  # the same notifications, the same frame
        for client, indexes in mine.items():
            key = tuple(sorted(indexes))
            if key not in frames:
                frames[key] = event([raws[i] for i in key])
            self.send_all((client,), frames[key])

    def recipients(self, prefixes):
        """The clients in the rooms of ``prefixes``, each once."""
        if len(prefixes) == 1:
            return self.rooms[prefixes[0]]
        return set().union(*(self.rooms[p] for p in prefixes))

    def send_all(self, recipients, data):
        """``data`` to each of ``recipients``: one non-blocking ``send`` each, the rest
        buffered (in order, behind anything already waiting)."""
        closed = None
        for client in recipients:
            if client.out:
                client.out += data
                continue
            try:
                sent = client.send(data)
            except BlockingIOError:
                sent = 0
            except OSError:
                closed = (closed or []) + [client]
                continue
            if sent < len(data):
                client.out = bytearray(data[sent:])
                self.selector.modify(client.sock, WRITE, client)
        for client in closed or ():
            self.close(client)

    def read_redis(self):
        try:
            chunk = self.redis.recv(1 << 20)
        except BlockingIOError:
            return
        if not chunk:
            raise SystemExit("Redis closed the subscription")
        buffer = self.redis_buffer
        buffer += chunk
        at, raws = 0, []
        while True:
            parsed = resp(buffer, at)
            if parsed is None:
                break
            message, at = parsed
            if isinstance(message, list) and message[0] == b"message" and message[1] == CHANNEL:
                raws.append(message[2])
        del buffer[:at]
        for start in range(0, len(raws), BATCH_MAX):
            self.fan_out(raws[start:start + BATCH_MAX])

    # -- reading a client: the upgrade, then websocket frames ------------------------------

    def read(self, client):
        try:
            chunk = client.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.close(client)
            return
        client.inbuf += chunk
        if not client.upgraded:
            self.upgrade(client)
        else:
            self.frames(client)

    def upgrade(self, client):
        end = client.inbuf.find(b"\r\n\r\n")
        if end < 0:
            if len(client.inbuf) > 16384:
                self.close(client)
            return
        head = bytes(client.inbuf[:end])
        del client.inbuf[:end + 4]
        accept = accept_key(head)
        if accept is None:
            self.write(client, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            self.close(client)
            return
        client.upgraded = True
        opened = json.dumps({"sid": client.sid, "upgrades": [], "pingInterval": PING_INTERVAL,
                             "pingTimeout": PING_TIMEOUT, "maxPayload": 1_000_000})
        self.write(client, b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                           b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
                   + frame(b"0" + opened.encode()))
        self.frames(client)

    def frames(self, client):
        buf = client.inbuf
        while len(buf) >= 2 and client in self.clients:
            first, second = buf[0], buf[1]
            size, at = second & 0x7F, 2
            if size == 126:
                if len(buf) < 4:
                    return
                size, at = struct.unpack_from("!H", buf, 2)[0], 4
            elif size == 127:
                if len(buf) < 10:
                    return
                size, at = struct.unpack_from("!Q", buf, 2)[0], 10
            masked = second & 0x80
            if len(buf) < at + (4 if masked else 0) + size:
                return
            if masked:
                payload = unmask(bytes(buf[at:at + 4]), bytes(buf[at + 4:at + 4 + size]))
                at += 4
            else:
                payload = bytes(buf[at:at + size])
            del buf[:at + size]
            self.on_frame(client, first & 0x80, first & 0x0F, payload)

    def on_frame(self, client, final, opcode, payload):
        if opcode == 0x8:  # close: answered, then closed
            self.write(client, frame(payload[:2], 0x8))
            self.close(client)
        elif opcode == 0x9:
            self.write(client, frame(payload, 0xA))
        elif opcode in (0x0, 0x1):
            if opcode == 0x1:
                client.fragments = payload
            elif client.fragments is not None:
                client.fragments += payload
            if final and client.fragments is not None:
                text, client.fragments = client.fragments.decode(), None
                self.on_packet(client, text)

    def on_packet(self, client, text):
        """One Engine.IO packet: a ping (``2``), or a Socket.IO message (``4``...)."""
        if text == "2":
            self.write(client, frame(b"3"))
        elif text.startswith("40" + NAMESPACE):
            body = json.dumps({"sid": client.sid})
            self.write(client, frame(f"40{NAMESPACE},{body}".encode()))
        elif text.startswith("41" + NAMESPACE):
            self.leave(client)
        elif text.startswith("42" + NAMESPACE + ","):
            rest = text[len(NAMESPACE) + 3:]
            digits = len(rest) - len(rest.lstrip("0123456789"))
            ack, event = rest[:digits], json.loads(rest[digits:])
            if event[0] == "subscribe" and isinstance(event[1], dict):
                topics = [t for t in event[1].get("topics", ()) if isinstance(t, str)]
                for topic in topics:
                    self.rooms.setdefault(topic, set()).add(client)
                client.topics.update(topics)
                if ack:
                    answer = json.dumps([{"ok": True, "topics": sorted(client.topics)}])
                    self.write(client, frame(f"43{NAMESPACE},{ack}{answer}".encode()))

    def leave(self, client):
        for topic in client.topics:
            self.rooms[topic].discard(client)
        client.topics = set()


if __name__ == "__main__":
    floor = Floor(os.environ["REDIS_URL"], int(os.environ["PORT"]))
    print("listening", flush=True)
    try:
        floor.run()
    except KeyboardInterrupt:
        pass
