"""What a reconnect costs the server, beside a bare websocket handshake, in one run.

Herald: one web process (common.stack: the user ``bench`` subscribed to
``bench``); ``--replayed`` notifications (default 20) published on ``bench``
after a first connection took its cursor (``replayed.last_id``). Then
``--reconnects`` (default 2,000) reconnects as herald.js makes them after a
drop: websocket upgrade, Engine.IO open, namespace connect with
``auth = {"token": T, "last_id": CURSOR}`` (docs/contract.md: the stored
subscriptions decide what is replayed; the client sends no subscribe), every
replayed notification and ``replayed`` (its count checked), then a close.

Floor: bench/peers/minimal_relay.py (gevent pywsgi + gevent-websocket, like
Herald) on the same machine: upgrade -> 101 -> Engine.IO open packet ->
close. Same client, same count.

Library: bench/peers/plain_socketio.py, python-socketio's own server on the
same stack, whose connect handler sends the very page and ``replayed`` Herald
sent (taken from Herald in this run) with no token, no Redis and no rooms: the
part of a reconnect that is the library's, measured the same way
(``library``); and the same after one Redis round trip through Herald's own
Redis client (redis-py, app/redis_client.py), three reads in a pipeline as
Herald's connect makes (``library_redis``): the least a reconnect on these
libraries that checks anything costs. Herald's reconnect
does all of that and its own work besides.

The client is a few lines of blocking sockets (no asyncio, no Socket.IO
client) in this process, one reconnect at a time; the four servers' turns
alternate in ``--rounds`` rounds so all see the same noise. The figure is
the server's CPU (user + system of its process, tests.support.cpu_seconds)
per reconnect, less what it spends idle (measured before, over
``--idle`` s); each reconnect's time is from the TCP connect to the last
replayed message (Herald, libraries) or the open packet (floor).
``floor_ratio`` is Herald's CPU per reconnect over the floor's per handshake
(the goal of issue 39: at most 3); ``library.floor_ratio`` and
``library_redis.floor_ratio`` are the references'.

    .venv/bin/python bench/reconnect.py [--reconnects 2000] [--replayed 20] [--rounds 4]
"""
import argparse
import base64
import json
import os
import socket
import struct
import time

# common first: it puts the project on sys.path
from common import minimal_relay, plain_socketio, save, stack, summary

from tests.support import cpu_seconds  # noqa: E402

NS = "/notifications"
ENGINE_PATH = "/socket.io/?EIO=4&transport=websocket"


class Socket:
    """One client websocket over a blocking socket: text frames out (masked, as a
    client must), frames in; nothing it does not need (no fragments, no ping)."""

    def __init__(self, base_url, path=ENGINE_PATH, timeout=10):
        host, port = base_url.split("://", 1)[1].split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.sock.makefile("rb")
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        status = self.file.readline()
        if b" 101 " not in status:
            raise RuntimeError(f"no upgrade: {status!r}")
        while self.file.readline() not in (b"\r\n", b""):
            pass

    def send(self, text, opcode=1):
        payload, mask = (text if isinstance(text, bytes) else text.encode()), os.urandom(4)
        size = len(payload)
        head = bytes((0x80 | opcode,)) + (bytes((0x80 | size,)) if size < 126 else
                                          struct.pack("!BH", 0x80 | 126, size) if size < 65536 else
                                          struct.pack("!BQ", 0x80 | 127, size))
        stretched = (mask * (size // 4 + 1))[:size]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(stretched, "big")).to_bytes(size, "big")
        self.sock.sendall(head + mask + masked)

    def receive(self):
        """The next frame's text; None once the server closes."""
        head = self.file.read(2)
        if len(head) < 2:
            return None
        opcode, size = head[0] & 0x0F, head[1] & 0x7F
        if size == 126:
            size = struct.unpack("!H", self.file.read(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", self.file.read(8))[0]
        payload = self.file.read(size)
        return None if opcode == 8 else payload.decode()

    def close(self):
        """A clean close: the close frame, then the server's (or its end of the stream)."""
        try:
            self.send(b"\x03\xe8", opcode=8)  # 1000, normal closure (as bytes: a str
            # would be UTF-8 encoded into an invalid code, a protocol error to log)
            while self.receive() is not None:
                pass
        except OSError:
            pass
        self.file.close()
        self.sock.close()


def reconnect(url, token, last_id, expected, pages=None):
    """One reconnect as herald.js makes it: how many notifications were replayed, and
    ``replayed``'s payload (each page's notifications added to ``pages`` when given)."""
    ws = Socket(url)
    try:
        if not ws.receive().startswith("0{"):
            raise RuntimeError("no Engine.IO open packet")
        auth = {"token": token} if last_id is None else {"token": token, "last_id": last_id}
        ws.send(f"40{NS}," + json.dumps(auth))
        replayed = 0
        while True:
            message = ws.receive()
            if message is None:
                raise RuntimeError("closed before the replay was done")
            if message.startswith(f"44{NS}"):
                raise RuntimeError(f"refused: {message}")
            if message.startswith(f'42{NS},["notifications",'):
                replayed += message.count('"id":')  # a page of notifications' JSON, as it is
                if pages is not None:
                    pages.extend(json.loads(message[len(f"42{NS},"):])[1])
            elif message.startswith(f'42{NS},["replayed",'):
                payload = json.loads(message[len(f'42{NS},["replayed",'):-1])
                if expected is not None and {payload["count"], replayed} != {expected}:
                    raise RuntimeError(f"replayed {payload} ({replayed} received) where "
                                       f"{expected} were expected")
                return replayed, payload
    finally:
        ws.close()


def handshake(url):
    """The floor: upgrade, the Engine.IO open packet, close."""
    ws = Socket(url)
    try:
        if not ws.receive().startswith("0{"):
            raise RuntimeError("no Engine.IO open packet")
    finally:
        ws.close()


def timed(pid, idle_share, count, one, deadline):
    """Run ``one`` up to ``count`` times (until ``deadline``): the times (ms) and
    the server's CPU for them less its idle share."""
    times = []
    cpu, started = cpu_seconds([pid]), time.monotonic()
    while len(times) < count and time.monotonic() < deadline:
        begun = time.perf_counter()
        one()
        times.append((time.perf_counter() - begun) * 1000)
    elapsed, cpu = time.monotonic() - started, cpu_seconds([pid]) - cpu
    return times, max(0.0, cpu - idle_share * elapsed)


def idle_share(pid, seconds):
    cpu = cpu_seconds([pid])
    time.sleep(seconds)
    return (cpu_seconds([pid]) - cpu) / seconds


def measure(sides, args, deadline):
    """Each side's figures: ``sides`` (name, pid, one reconnect) warmed up, their idle
    CPU taken, then ``args.reconnects`` each in ``args.rounds`` alternating rounds."""
    for _ in range(50):  # warm them all up
        for _name, _pid, one in sides:
            one()
    idle = {name: idle_share(pid, args.idle) for name, pid, _one in sides}
    per_round = -(-args.reconnects // args.rounds)
    rounds = {name: [] for name, _pid, _one in sides}
    for _round in range(args.rounds):
        for name, pid, one in sides:
            left = args.reconnects - sum(len(t) for t, _cpu in rounds[name])
            rounds[name].append(timed(pid, idle[name], min(per_round, left), one, deadline))
    figures = {}
    for name, runs in rounds.items():
        times = [ms for t, _cpu in runs for ms in t]
        figures[name] = {"cpu_us": round(sum(c for _t, c in runs) / len(times) * 1e6, 1),
                         "times": summary(times), "count": len(times),
                         "spread_us": [round(c / len(t) * 1e6, 1) for t, c in runs if t],
                         "idle_share": round(idle[name], 4)}
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reconnects", type=int, default=2000)
    parser.add_argument("--replayed", type=int, default=20, help="notifications replayed each time")
    parser.add_argument("--rounds", type=int, default=4, help="the servers alternate this often")
    parser.add_argument("--idle", type=float, default=3, help="s of idle CPU measured first")
    parser.add_argument("--max-seconds", type=float, default=240, help="bound on the whole run")
    args = parser.parse_args()
    deadline = time.monotonic() + args.max_seconds
    with stack() as (redis_server, _client, server, key), \
            minimal_relay(redis_server.url) as (relay_url, relay):
        token = server.token("bench", "bench-password")
        _count, live = reconnect(server.url, token, None, 0)  # where this user's history is now
        for i in range(args.replayed):
            server.publish(key, topic="bench", title=f"r{i}", body="to be replayed")
        cursor, page = live["last_id"], []
        _count, replayed = reconnect(server.url, token, cursor, args.replayed, page)
        with plain_socketio(page, replayed) as (library_url, library), \
                plain_socketio(page, replayed, redis_server.url) as (library_redis_url, library_redis):
            def one(url):
                return lambda: reconnect(url, token, cursor, args.replayed)

            sides = (("herald", server.process.pid, one(server.url)),
                     ("library", library.pid, one(library_url)),
                     ("library_redis", library_redis.pid, one(library_redis_url)),
                     ("floor", relay.pid, lambda: handshake(relay_url)))
            rounds = measure(sides, args, deadline)
    herald, floor = rounds["herald"], rounds["floor"]
    ratio = lambda side: round(side["cpu_us"] / floor["cpu_us"], 2) if floor["cpu_us"] else None  # noqa: E731
    result = {
        "reconnects": herald["count"], "replayed_each": args.replayed,
        "server_cpu_us_per_reconnect": herald["cpu_us"], "reconnect_ms": herald["times"],
        "server_cpu_us_per_reconnect_by_round": herald["spread_us"],
        "server_idle_cpu_share": herald["idle_share"],
        "floor": {"server_cpu_us_per_handshake": floor["cpu_us"], "handshake_ms": floor["times"],
                  "server_cpu_us_per_handshake_by_round": floor["spread_us"],
                  "handshakes": floor["count"], "server_idle_cpu_share": floor["idle_share"]},
        "floor_ratio": ratio(herald)}
    for name in ("library", "library_redis"):
        side = rounds[name]
        result[name] = {"server_cpu_us_per_reconnect": side["cpu_us"], "reconnect_ms": side["times"],
                        "server_cpu_us_per_reconnect_by_round": side["spread_us"],
                        "reconnects": side["count"], "server_idle_cpu_share": side["idle_share"],
                        "floor_ratio": ratio(side)}
    print(f"{result['reconnects']} reconnects, {args.replayed} replayed each; "
          f"{floor['count']} bare handshakes (the floor):")
    for name, label in (("herald", "Herald reconnect"), ("library", "python-socketio alone"),
                        ("library_redis", "python-socketio + a Redis trip"),
                        ("floor", "bare handshake")):
        side = rounds[name]
        print(f"  {label}: server CPU {side['cpu_us']:.0f} us each (rounds {side['spread_us']}), "
              f"time median {side['times']['median']:.2f} ms, p99 {side['times']['p99']:.2f} ms")
    print(f"  Herald / floor (server CPU): {result['floor_ratio']}   "
          f"(time, median over median: {herald['times']['median'] / floor['times']['median']:.2f}); "
          f"python-socketio alone / floor: {ratio(rounds['library'])}, "
          f"with a Redis trip: {ratio(rounds['library_redis'])}")
    print(f"written to {save('reconnect', result)}")


if __name__ == "__main__":
    main()
