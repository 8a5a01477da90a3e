"""Herald under abuse: floods of events and of connections, and what others notice.

For each attack, on one web process (``python wsgi.py``) and its Redis:

- a normal client (python-socketio) subscribed to ``bench`` gets one
  notification every 100 ms, published over REST: its publish-to-delivery
  latency is measured before, during and after the attack;
- ``/healthz`` is asked every 100 ms: its answer time, and its status;
- the web process's resident memory before, at the attack's peak, and 5 s after.

Attacks:

- **events**: 20 connections of one signed-in user each send 20,000 ``read``
  events as fast as the socket takes them;
- **connections**: 5,000 TCP connections that send nothing (bounded: the
  admission limit is set to 2,000, as a process near its descriptor limit).

The attacks of issue 35 (points 2 and 3) come from other loopback addresses
(127.0.0.2, 127.0.0.3: all of 127/8 is local on Linux), made by one attacker
process of non-blocking sockets (epoll); during each, a legitimate
python-socketio client connects from 127.0.0.1 every few seconds (websocket
transport, a real token, /notifications, python-socketio's defaults: 5 s for
the websocket's opening, ``wait_timeout=5`` for the namespace), timed from
``connect()`` to connected; one that fails is tried again at once with 60 s
for both, to see how long it would have taken:

- **slow-headers**: ``--slow`` connections from each of two addresses
  (2,000: with ``MAX_CONNECTIONS=4000`` they fill it; the per-address limit
  keeps its default, 10,000), each sending a request line and then one
  header line every 8 s; each one the server closes is opened again
  (after 1 s when it was refused or ended within 0.5 s). Reported: how each
  ended (408, 503, closed without an answer) and after how long;
- **idle**: ``--idle`` TCP connections (3,000, then 6,000: a run each) from
  one address that send nothing, each opened again when the server closes it;
- **idle-rate**: ``--idle-rate`` new idle connections a second (100) from one
  address for ``--idle-rate-seconds`` (70), none opened again; the legitimate
  connects of the first 10 s beside those of the last 10 s.

    .venv/bin/python bench/abuse.py [--attack events|connections|both|slow-headers|idle|idle-rate|issue35]
"""
import argparse
import collections
import errno
import heapq
import json
import resource
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time

import requests  # noqa: E402
import socketio  # noqa: E402
import websocket  # noqa: E402
from common import percentile, save, summary  # first: it puts the project on sys.path

from app.ops.processes import die_with_parent  # noqa: E402
from app.users import accounts, subscriptions  # noqa: E402
from tests.support import NAMESPACE, Listener, LiveServer, RedisServer, flood_reads, rss_mb  # noqa: E402

ISSUE_35 = ("slow-headers", "idle", "idle-rate")


class Observer(threading.Thread):
    """Publishes every 100 ms and asks /healthz; records latencies by phase."""

    def __init__(self, server, key, listener):
        super().__init__(daemon=True)
        self.server, self.key, self.listener = server, key, listener
        self.phase = "before"
        self.delivery, self.health, self.health_status = {}, {}, {}
        self.running = True

    def run(self):
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self.key}"
        count = 0
        while self.running:
            phase = self.phase
            started = time.time()
            try:
                reply = session.post(self.server.url + "/api/notifications", timeout=30,
                                     json={"topic": "bench.tick", "title": f"t{count}"})
                sent = reply.json()["id"]
                deadline = time.time() + 30
                while sent not in self.listener.ids() and time.time() < deadline:
                    time.sleep(0.002)
                self.delivery.setdefault(phase, []).append((time.time() - started) * 1000)
            except (requests.RequestException, ValueError, KeyError):
                self.delivery.setdefault(phase, []).append(30_000.0)
            began = time.time()
            try:
                status = requests.get(self.server.url + "/healthz", timeout=30).status_code
            except requests.RequestException:
                status = 0
            self.health.setdefault(phase, []).append((time.time() - began) * 1000)
            self.health_status.setdefault(phase, []).append(status)
            count += 1
            time.sleep(0.1)


def event_flood(server, token, connections=20, events=20_000):
    def one():
        try:
            flood_reads(server, token, events).shutdown()
        except (OSError, websocket.WebSocketException):
            pass  # refused or cut off at once
    threads = [threading.Thread(target=one) for _ in range(connections)]
    for thread in threads:
        thread.start()
    return threads


def connection_flood(server, count=5_000):
    held = []
    for _ in range(count):
        try:
            held.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        except OSError:
            break
    return held


# ---------------------------------------------------------------------------
# The attacker of issue 35: one process, non-blocking sockets, epoll.

IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)  # the port chosen at connect


class _Conn:
    __slots__ = ("sock", "source", "started", "connected", "answer", "lines")

    def __init__(self, sock, source, started):
        self.sock, self.source, self.started = sock, source, started
        self.connected = None
        self.answer = b""
        self.lines = 0


class Attacker:
    """Holds connections to 127.0.0.1:``port`` from ``sources``, as ``spec`` says:

    - ``mode`` "slow": ``per_source`` from each source, each sending a request
      line at once and a header line every ``every`` seconds, opened again
      when the server closes it;
    - "idle": ``per_source`` from each source sending nothing, opened again;
    - "idle-rate": ``rate`` new ones a second (the sources in turn) for
      ``seconds``, never opened again.

    Prints a status line (JSON) every second and, once stopped (SIGTERM, or
    ``limit`` seconds), a final one with how each connection ended, and when."""

    def __init__(self, spec):
        self.spec = spec
        self.mode = spec["mode"]
        self.target = ("127.0.0.1", spec["port"])
        self.selector = selectors.DefaultSelector()
        self.opens = []  # heap of (not before, sequence, source)
        self.sends = []  # heap of (when, sequence, connection): the next header line
        self.sequence = 0
        self.conns = set()
        self.start = time.monotonic()
        self.stopping = False
        self.ends = collections.defaultdict(list)  # kind -> [(at, lifetime)]
        self.opened = 0
        self.connect_errors = collections.Counter()
        self.peak_connected = 0
        self.first_full = None  # seconds until every wanted connection was connected

    def _push_open(self, when, source):
        self.sequence += 1
        heapq.heappush(self.opens, (when, self.sequence, source))

    def run(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "stopping", True))
        spec, now = self.spec, self.start
        if self.mode == "idle-rate":
            total = int(spec["rate"] * spec["seconds"])
            for index in range(total):
                self._push_open(now + index / spec["rate"], spec["sources"][index % len(spec["sources"])])
        else:
            for _ in range(spec["per_source"]):
                for source in spec["sources"]:
                    self._push_open(now, source)
        open_rate = spec.get("open_rate", 2000)  # new connections a second, at most (the SYN backlog)
        allowance, last, status_at = 0.0, now, now + 1
        limit = now + spec.get("limit", 600)
        while not self.stopping and time.monotonic() < limit:
            now = time.monotonic()
            allowance = min(open_rate / 10, allowance + (now - last) * open_rate)
            last = now
            while self.opens and self.opens[0][0] <= now and allowance >= 1:
                allowance -= 1
                self._open(heapq.heappop(self.opens)[2], now)
            while self.sends and self.sends[0][0] <= now:
                self._send_header(heapq.heappop(self.sends)[2], now)
            wait = 0.05
            if self.sends:
                wait = min(wait, max(0.0, self.sends[0][0] - now))
            for key, events in self.selector.select(wait):
                self._event(key.data, events)
            if now >= status_at:
                status_at += 1
                print(json.dumps(self._status()), flush=True)
        for conn in list(self.conns):
            self._forget(conn)
        print(json.dumps({"final": self._final()}), flush=True)

    def _open(self, source, now):
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        except OSError as error:
            self.connect_errors[errno.errorcode.get(error.errno, str(error))] += 1
            self._again(source, now, 1.0)
            return
        try:
            sock.setsockopt(socket.SOL_IP, IP_BIND_ADDRESS_NO_PORT, 1)
            sock.bind((source, 0))
            sock.setblocking(False)
            code = sock.connect_ex(self.target)
        except OSError as error:
            code = error.errno
        if code not in (0, errno.EINPROGRESS):
            self.connect_errors[errno.errorcode.get(code, str(code))] += 1
            sock.close()
            self._again(source, now, 1.0)
            return
        conn = _Conn(sock, source, now)
        self.conns.add(conn)
        self.opened += 1
        self.selector.register(sock, selectors.EVENT_WRITE, conn)

    def _again(self, source, now, delay):
        if self.mode != "idle-rate" and not self.stopping:
            self._push_open(now + delay, source)

    def _event(self, conn, events):
        now = time.monotonic()
        if conn.connected is None:
            code = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                self.connect_errors[errno.errorcode.get(code, str(code))] += 1
                self._forget(conn)
                self._again(conn.source, now, 1.0)
                return
            conn.connected = now
            self.selector.modify(conn.sock, selectors.EVENT_READ, conn)
            if self.mode == "slow":
                if not self._write(conn, b"GET / HTTP/1.1\r\n", now):
                    return
                self.sequence += 1
                heapq.heappush(self.sends, (now + self.spec["every"], self.sequence, conn))
            return
        try:
            data = conn.sock.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            self._ended(conn, "reset", now)
            return
        if data:
            conn.answer = (conn.answer + data)[:64]
        else:
            self._ended(conn, None, now)

    def _write(self, conn, data, now):
        try:
            conn.sock.send(data)
            return True
        except BlockingIOError:
            return True  # a line lost to a full buffer: it stays slow all the same
        except OSError:
            self._ended(conn, "reset", now)
            return False

    def _send_header(self, conn, now):
        if conn not in self.conns:
            return
        conn.lines += 1
        if self._write(conn, b"X-Slow-%d: %d\r\n" % (conn.lines, conn.lines), now):
            self.sequence += 1
            heapq.heappush(self.sends, (now + self.spec["every"], self.sequence, conn))

    def _ended(self, conn, how, now):
        """The server ended ``conn``: recorded by what it answered (its status), or
        "closed" (no answer) or "reset"."""
        if conn.answer.startswith(b"HTTP/1."):
            kind = conn.answer.split(b" ", 2)[1].decode(errors="replace")
        else:
            kind = how or "closed"
        lifetime = now - conn.connected
        self.ends[kind].append((round(now - self.start, 2), round(lifetime, 3)))
        self._forget(conn)
        self._again(conn.source, now, 1.0 if kind == "503" or lifetime < 0.5 else 0.0)

    def _forget(self, conn):
        self.conns.discard(conn)
        try:
            self.selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.sock.close()

    def _status(self):
        connected = sum(1 for c in self.conns if c.connected is not None)
        self.peak_connected = max(self.peak_connected, connected)
        wanted = self.spec.get("per_source", 0) * len(self.spec["sources"])
        if self.first_full is None and wanted and connected >= 0.98 * wanted:
            self.first_full = round(time.monotonic() - self.start, 1)
        return {"t": round(time.monotonic() - self.start, 1), "connected": connected,
                "connecting": len(self.conns) - connected, "opened": self.opened,
                "ended": {kind: len(v) for kind, v in self.ends.items()}}

    def _final(self):
        now = time.monotonic()
        still = [now - c.connected for c in self.conns if c.connected is not None]
        return {**self._status(), "peak_connected": self.peak_connected,
                "first_full_s": self.first_full, "connect_errors": dict(self.connect_errors),
                "ends": {kind: v for kind, v in self.ends.items()},
                "longest_open_at_stop_s": round(max(still), 2) if still else None}


def start_attacker(spec):
    """The attacker in a process of its own (this one's GIL is the measurer's)."""
    process = subprocess.Popen([sys.executable, __file__, "--attacker", json.dumps(spec)],
                               stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
    state = {"last": None, "final": None, "status": []}

    def read():
        for line in process.stdout:
            record = json.loads(line)
            if "final" in record:
                state["final"] = record["final"]
            else:
                state["last"] = record
                state["status"].append(record)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return process, reader, state


# ---------------------------------------------------------------------------
# The legitimate client: python-socketio, timed from connect() to connected.

_last_refusal = threading.local()
_create_connection = websocket.create_connection


def _recording_create_connection(*args, **kwargs):
    """websocket-client's, noting on this thread how an opening failed (python-engineio
    turns every failure into "Connection error")."""
    try:
        return _create_connection(*args, **kwargs)
    except websocket.WebSocketBadStatusException as error:
        _last_refusal.status = error.status_code
        raise
    except Exception as error:
        _last_refusal.status = type(error).__name__
        raise


websocket.create_connection = _recording_create_connection


def legit_connect(server, token, patient=False):
    """One connect as an application makes it: ``(seconds, error or None, how the
    websocket's opening failed or None)``. ``patient``: 60 s instead of the 5 s
    defaults, to see how long a failed one would have taken."""
    client = socketio.Client(reconnection=False, **({"request_timeout": 60} if patient else {}))
    refusals = []
    client.on("connect_error", refusals.append, namespace=NAMESPACE)
    _last_refusal.status = None
    started = time.monotonic()
    error = None
    try:
        client.connect(server.url, namespaces=[NAMESPACE], auth={"token": token},
                       transports=["websocket"], wait_timeout=60 if patient else 5)
    except socketio.exceptions.ConnectionError as failure:
        error = str(failure) + (f" ({refusals[0]})" if refusals else "")
    elapsed = time.monotonic() - started
    try:
        client.disconnect()
    except Exception:
        pass
    return elapsed, error, _last_refusal.status


class LegitConnects(threading.Thread):
    """Connects at the monotonic times ``times`` (in turn: a slow one delays the next)."""

    def __init__(self, server, token, times, origin):
        super().__init__(daemon=True)
        self.server, self.token, self.times, self.origin = server, token, times, origin
        self.results = []

    def run(self):
        for when in self.times:
            time.sleep(max(0.0, when - time.monotonic()))
            at = time.monotonic() - self.origin
            seconds, error, opening = legit_connect(self.server, self.token)
            result = {"at": round(at, 1), "seconds": round(seconds, 3), "ok": error is None}
            if error:
                result.update(error=error, opening=opening)
                patient, patient_error, patient_opening = legit_connect(
                    self.server, self.token, patient=True)
                result.update(patient_seconds=round(patient, 3), patient_ok=patient_error is None)
                if patient_error:
                    result.update(patient_error=patient_error, patient_opening=patient_opening)
            self.results.append(result)


def metrics(server):
    """Admission's counters from /metrics (a health probe: answered past the limit)."""
    names = ("herald_handshakes_waited", "herald_handshakes_expired", "herald_connections_refused",
             "herald_join_timeouts", "herald_connected_clients")
    try:
        text = requests.get(server.url + "/metrics", timeout=10).text
    except requests.RequestException as error:
        return {"error": str(error)}
    found = {}
    for line in text.splitlines():
        for name in names:
            if line.startswith((name + "{", name + " ", name + "_total{", name + "_total ")):
                found[name] = found.get(name, 0) + float(line.rsplit(" ", 1)[1])
    return found


def stats(values):
    if not values:
        return None
    return {**summary(values), "p90": percentile(values, 0.9), "min": min(values)}


# ---------------------------------------------------------------------------


def server_env(attack, options):
    """The web process's settings for ``attack``."""
    if attack in ("events", "connections"):
        return {"MAX_CONNECTIONS": "2000", "MAX_CONNECTIONS_PER_ADDRESS": "0"}
    if attack == "slow-headers":
        return {"MAX_CONNECTIONS": str(options.max_connections)}
    return {}  # idle, idle-rate: Herald's defaults (MAX_CONNECTIONS: the descriptor limit less 400)


def attack_spec(attack, server, options, size):
    if attack == "slow-headers":
        return {"mode": "slow", "port": server.port, "sources": ["127.0.0.2", "127.0.0.3"],
                "per_source": size, "every": 8.0}
    if attack == "idle":
        return {"mode": "idle", "port": server.port, "sources": ["127.0.0.2"], "per_source": size}
    return {"mode": "idle-rate", "port": server.port, "sources": ["127.0.0.2"],
            "rate": options.idle_rate, "seconds": options.idle_rate_seconds}


def measure(attack, options, size=None):
    import tempfile
    from pathlib import Path
    folder = Path(tempfile.mkdtemp(prefix="herald-bench-"))
    redis_server = RedisServer(folder)
    redis_server.start()
    client = redis_server.client()
    accounts.create_user(client, "ann", "ann-password")
    accounts.create_user(client, "eve", "eve-password")
    accounts.create_user(client, "lee", "lee-password")
    subscriptions.add(client, "ann", ["bench"], limit=10)
    key = accounts.create_api_key(client, "bench")
    server = LiveServer(redis_server.url, folder, REQUEST_TIMEOUT="10", MAX_SESSIONS_PER_ADDRESS="0",
                        RATELIMIT_API_KEY="100000 per second", **server_env(attack, options))
    server.start()
    listener = Listener(server, server.token("ann", "ann-password"))
    observer = Observer(server, key, listener)
    memory, extra = {}, {}
    attacker = None
    try:
        observer.start()
        time.sleep(3)
        memory["before"] = rss_mb(server.process.pid)
        observer.phase = "during"
        if attack == "events":
            threads = event_flood(server, server.token("eve", "eve-password"))
            peak = memory["before"]
            for thread in threads:
                while thread.is_alive():
                    peak = max(peak, rss_mb(server.process.pid))
                    thread.join(0.2)
            held = []
        elif attack == "connections":
            held = connection_flood(server)
            peak = rss_mb(server.process.pid)
            time.sleep(5)
            peak = max(peak, rss_mb(server.process.pid))
        else:
            held = []
            token = server.token("lee", "lee-password")
            extra["legit_before"] = [round(legit_connect(server, token)[0], 3) for _ in range(3)]
            seconds = options.idle_rate_seconds if attack == "idle-rate" else options.seconds
            spec = attack_spec(attack, server, options, size)
            spec["limit"] = seconds + 180
            attacker, reader, state = start_attacker(spec)
            origin = time.monotonic()
            first = 1.0 if attack == "idle-rate" else options.warmup
            count = options.legit or (35 if attack == "idle-rate" else 20)
            gap = (seconds - 2 - first) / max(1, count - 1)
            prober = LegitConnects(server, token, [origin + first + i * gap for i in range(count)], origin)
            prober.start()
            peak = memory["before"]
            while time.monotonic() - origin < seconds or (prober.is_alive()
                                                         and time.monotonic() - origin < seconds + 150):
                peak = max(peak, rss_mb(server.process.pid))
                if attacker.poll() is not None:
                    raise RuntimeError(f"the attacker exited early ({attacker.returncode})")
                time.sleep(0.25)
            extra["metrics_at_end"] = metrics(server)
            attacker.send_signal(signal.SIGTERM)
            attacker.wait(60)
            reader.join(10)
            prober.join(1)
            extra.update(attack_report(state, spec, prober.results, seconds))
            extra["server_log_errors"] = sum(
                1 for line in server.log_path.read_text(errors="replace").splitlines()
                if "Traceback" in line or '"level":"ERROR"' in line or " ERROR " in line)
        time.sleep(2)
        memory["peak"] = max(peak, rss_mb(server.process.pid))
        for sock in held:
            sock.close()
        observer.phase = "after"
        time.sleep(5)
        memory["after"] = rss_mb(server.process.pid)
        if attack in ISSUE_35:
            token = server.token("lee", "lee-password")
            extra["legit_after"] = [round(legit_connect(server, token)[0], 3) for _ in range(3)]
            extra["metrics_after"] = metrics(server)
    finally:
        if attacker is not None and attacker.poll() is None:
            attacker.kill()
            attacker.wait(10)
        observer.running = False
        observer.join(60)
        listener.close()
        server.stop()
        client.close()
        redis_server.stop()
    return {"attack": attack, "size": size, "server_env": server_env(attack, options),
            "memory_mb": memory, **extra,
            "delivery_ms": {p: summary(v) for p, v in observer.delivery.items() if v},
            "healthz_ms": {p: summary(v) for p, v in observer.health.items() if v},
            "healthz_not_200": {p: sum(1 for s in v if s != 200)
                                for p, v in observer.health_status.items()},
            "server_log": str(server.log_path)}


# seconds: REQUEST_TIMEOUT 10, plus HANDSHAKE_WAIT 3, plus the handshake line's 30
LIFETIME_EDGES = (0.5, 10.5, 13.5, 20.5, 30.5, 41.0)


def lifetime_buckets(lifetimes):
    """How many of ``lifetimes`` (seconds) fell in each LIFETIME_EDGES bucket, by
    its upper edge ("<0.5", ..., ">41.0")."""
    names = [f"<{edge}" for edge in LIFETIME_EDGES] + [f">{LIFETIME_EDGES[-1]}"]
    counts = dict.fromkeys(names, 0)
    for life in lifetimes:
        index = next((i for i, edge in enumerate(LIFETIME_EDGES) if life < edge), len(LIFETIME_EDGES))
        counts[names[index]] += 1
    return {name: count for name, count in counts.items() if count}


def attack_report(state, spec, legit, seconds):
    """What the attacker saw (how its connections ended) and the legitimate connects."""
    final = state["final"] or {}
    ends = final.get("ends", {})
    report = {"attacker": {key: value for key, value in final.items() if key != "ends"},
              "attacker_timeline": state["status"],
              "legit": legit}
    report["attacker"]["ended"] = {
        kind: {"count": len(v), "lifetime_s": stats([life for _, life in v]),
               "lifetimes": lifetime_buckets([life for _, life in v]),
               "per_second": round(len(v) / seconds, 1)}
        for kind, v in ends.items()}
    ok = [r["seconds"] for r in legit if r["ok"]]
    report["legit_summary"] = {
        "ok": len(ok), "total": len(legit), "seconds": stats(ok),
        "refused_503": sum(1 for r in legit if r.get("opening") == 503),
        "failed_5s": sum(1 for r in legit if not r["ok"]),
        "patient_seconds": stats([r["patient_seconds"] for r in legit
                                  if not r["ok"] and r.get("patient_ok")]),
        "all_seconds": stats([r["seconds"] for r in legit])}
    if spec["mode"] == "idle-rate":
        for name, low, high in (("first_10s", 0, 10), ("last_10s", seconds - 10, seconds + 1000)):
            window = [r for r in legit if low <= r["at"] < high]
            report["legit_summary"][name] = {
                "ok": sum(1 for r in window if r["ok"]), "total": len(window),
                "seconds": stats([r["seconds"] for r in window if r["ok"]])}
    return report


def describe(result):
    name = result["attack"] + (f" {result['size']}" if result.get("size") else "")
    print(f"{name}:")
    for phase in ("before", "during", "after"):
        d, h = result["delivery_ms"].get(phase), result["healthz_ms"].get(phase)
        if d and h:
            print(f"  {phase:6}  delivery median {d['median']:.0f} ms, max {d['max']:.0f} ms;"
                  f"  /healthz median {h['median']:.0f} ms, max {h['max']:.0f} ms,"
                  f" not 200: {result['healthz_not_200'].get(phase, 0)}")
    m = result["memory_mb"]
    print(f"  memory: before {m['before']:.0f} MB, peak {m['peak']:.0f} MB, after {m['after']:.0f} MB")
    legit = result.get("legit_summary")
    if legit:
        s = legit["seconds"]
        times = (f"median {s['median']:.3f} s, p90 {s['p90']:.3f} s, max {s['max']:.3f} s"
                 if s else "none connected")
        print(f"  legitimate connects: {legit['ok']}/{legit['total']} within the 5 s defaults "
              f"({times}); 503: {legit['refused_503']}")
        if legit["patient_seconds"]:
            p = legit["patient_seconds"]
            print(f"    the failed ones, tried again with 60 s: median {p['median']:.1f} s, "
                  f"max {p['max']:.1f} s")
        for window in ("first_10s", "last_10s"):
            if window in legit:
                w = legit[window]
                ws = w["seconds"]
                print(f"    {window}: {w['ok']}/{w['total']}"
                      + (f", median {ws['median']:.3f} s, max {ws['max']:.3f} s" if ws else ""))
        print(f"    before the attack {result['legit_before']} s, after it {result['legit_after']} s")
        a = result["attacker"]
        print(f"  attacker: peak {a['peak_connected']} connected (98% in at "
              f"{a['first_full_s']} s), {a['opened']} opened, connect errors {a['connect_errors']}")
        for kind, e in sorted(a["ended"].items()):
            life = e["lifetime_s"]
            print(f"    ended {kind}: {e['count']} ({e['per_second']}/s), lived median "
                  f"{life['median']:.1f} s, p90 {life['p90']:.1f} s, max {life['max']:.1f} s"
                  f"; by lifetime {e['lifetimes']}")
        if a.get("longest_open_at_stop_s") is not None:
            print(f"    longest still open at the end: {a['longest_open_at_stop_s']} s")
        print(f"  /metrics at the attack's end: {result['metrics_at_end']}")
        print(f"  server log error lines: {result['server_log_errors']} ({result['server_log']})")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--attacker":
        Attacker(json.loads(sys.argv[2])).run()
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attack", default="both",
                        choices=["events", "connections", "both", *ISSUE_35, "issue35"])
    parser.add_argument("--slow", type=int, default=2000,
                        help="slow-headers: connections from each of 127.0.0.2 and 127.0.0.3")
    parser.add_argument("--max-connections", type=int, default=4000,
                        help="slow-headers: the server's MAX_CONNECTIONS")
    parser.add_argument("--idle", default="3000,6000",
                        help="idle: connections held from 127.0.0.2, a run for each size")
    parser.add_argument("--idle-rate", type=float, default=100, help="idle-rate: new a second")
    parser.add_argument("--idle-rate-seconds", type=float, default=70)
    parser.add_argument("--seconds", type=float, default=60,
                        help="slow-headers and idle: how long the attack lasts")
    parser.add_argument("--warmup", type=float, default=5,
                        help="seconds into the attack of the first legitimate connect")
    parser.add_argument("--legit", type=int, default=0,
                        help="legitimate connects over the attack (default 20; 35 for idle-rate)")
    args = parser.parse_args()
    if args.attack == "both":
        runs = [("events", None), ("connections", None)]
    elif args.attack == "issue35":
        runs = [("slow-headers", args.slow), *(("idle", int(n)) for n in args.idle.split(",")),
                ("idle-rate", None)]
    elif args.attack == "idle":
        runs = [("idle", int(n)) for n in args.idle.split(",")]
    elif args.attack == "slow-headers":
        runs = [("slow-headers", args.slow)]
    else:
        runs = [(args.attack, None)]
    results = []
    for attack, size in runs:
        result = measure(attack, args, size)
        results.append(result)
        describe(result)
    name = "abuse" if args.attack in ("events", "connections", "both") else f"abuse-{args.attack}"
    print(f"written to {save(name, {'command': ' '.join(sys.argv), 'results': results})}")


if __name__ == "__main__":
    main()
