"""Memory over churned sessions: is the web process's RSS flat over 50,000 ended sessions of each kind?

Issue 35: an attacker's run took a web process from 95 to 212 MB with 52,606
fuzzed Socket.IO sessions, and it stayed there (+0.75-1.5 KB for each session
ended by a TCP reset, +1 KB per refused token, +1.2 KB per never-joined one):
what ended sessions left in reference cycles, which wsgi.py's rare full
collection did not free. Here one web process (``python wsgi.py``, loopback,
its own redis-server, per-address limits raised) serves ``--sessions`` sessions
of each kind, one kind after the other, driven over raw Engine.IO/Socket.IO
frames (websocket-client) and plain HTTP, as tests/integration/realtime/
test_churn_garbage.py drives them:

- ``joined_reset``: websocket, Socket.IO connect with a valid token, then a TCP reset;
- ``refused_reset``: websocket, connect with a forged token (refused), then a reset;
- ``never_joined_reset``: websocket, Engine.IO open only, then a reset;
- ``joined_closed``: websocket, connect with a valid token, then a clean close;
- ``sse_reset``: ``GET /api/stream`` with a bearer token, its 200 read, then a reset;
- ``polling``: a long-polling session opened, joined, and closed (Engine.IO CLOSE).

``--workers`` client processes (``--threads`` threads each) run the sessions,
each one after the other, every socket closed. For each kind, the web process's
RSS is read:

- after a warm-up of ``--warmup`` sessions, once the server reports none open
  (``/metrics``: ``herald_connected_clients`` and ``herald_sse_streams`` at 0)
  and ``--settle`` seconds have passed since the last (the ping and join wheels
  hold an ended connection for up to 25 s);
- every ``--every`` sessions while they run;
- at the end, drained as after the warm-up.

Reported per kind: RSS at warm-up and at the end, the growth (MB, and bytes per
session after the warm-up), the slope of RSS over the last half of the run
(least squares over the samples taken while it ran, bytes per session), the
sessions a second, and every refusal or error, by reason (the server's own
refusal counters beside them). RSS figures are MiB (VmRSS / 1024).

RSS is not live memory: neither pymalloc nor glibc gives back what a peak
took, so while the kinds run one after the other in one process, a kind
that grows less than the free space an earlier one left shows no growth at
all, and the wheels' holding ``rate × 25 s`` ended connections for a while
sets a high-water mark that stays. ``--census`` serves with
bench/churn_census.py instead of wsgi.py and asks it, at every sample and
drained, what is alive: the bytes in Python's allocator's blocks (live
memory, whatever RSS does), the ended connections and what the wheels hold,
live objects by type, the containers of thousands of items with their
holder, and (drained only, after which the garbage is freed) the reference
cycles by type. Its per-session growth of live memory is the figure that
says whether something accumulates.

    .venv/bin/python bench/churn.py [--sessions 50000] [--workers 2] [--threads 2] [--census]
"""
import argparse
import collections
import json
import multiprocessing
import socket
import struct
import tempfile
import threading
import time
from pathlib import Path

import requests
import websocket
from common import save  # first: it puts the project on sys.path

from app.users import accounts, subscriptions  # noqa: E402
from tests.support import NAMESPACE, CensusServer, LiveServer, RedisServer, rss_mb  # noqa: E402

TIMEOUT = 10  # seconds for any one read or connect of a session
DRAIN_WAIT = 60  # seconds to wait for the server to report no session open, at most
KINDS = ("joined_reset", "refused_reset", "never_joined_reset", "joined_closed", "sse_reset",
         "polling")
SERVER_ENV = {
    # One client address opens every session: the per-address guards would refuse them.
    "MAX_CONNECTIONS_PER_ADDRESS": "0", "MAX_SESSIONS_PER_ADDRESS": "0",
    "ADMIT_RATE": "0", "ADMIT_BURST": "0",
    "RATELIMIT_TOKEN": "100000 per minute", "RATELIMIT_SESSION_TOKEN": "100000 per minute",
}
MB = 1024 * 1024


class Refused(Exception):
    """The server said no (an HTTP status, a Socket.IO CONNECT_ERROR): counted by reason."""


# -- one session of each kind (in the client processes) -------------------------------


def _reset(sock):
    """Close ``sock`` with a TCP reset, as a phone losing its network does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def _open(port):
    try:
        ws = websocket.create_connection(
            f"ws://127.0.0.1:{port}/socket.io/?EIO=4&transport=websocket", timeout=TIMEOUT)
    except websocket.WebSocketBadStatusException as exc:
        raise Refused(f"HTTP {exc.status_code}") from None
    except ConnectionRefusedError:
        raise Refused("connect refused") from None
    try:
        first = ws.recv()
        if not first.startswith("0{"):  # Engine.IO's OPEN
            raise Refused(f"no OPEN: {first[:60]!r}")
    except BaseException:
        ws.close()
        raise
    return ws


def _join(ws, token):
    """Socket.IO CONNECT to the namespace; its answer, ``(accepted, message)``."""
    ws.send(f"40{NAMESPACE}," + json.dumps({"token": token}))
    while True:
        answer = ws.recv()
        if answer.startswith(f"40{NAMESPACE}"):
            return True, ""
        if answer.startswith(f"44{NAMESPACE}"):
            try:
                message = json.loads(answer.split(",", 1)[1])["message"]
            except (ValueError, KeyError, IndexError, TypeError):
                message = answer[:80]
            return False, message


def _reason(message):
    return message.split(":", 1)[0] if message.startswith("unauthorized") else message[:60]


def joined(port, token, reset):
    ws = _open(port)
    try:
        accepted, message = _join(ws, token)
        if not accepted:
            raise Refused(f"connect refused: {_reason(message)}")
    finally:
        if reset:
            _reset(ws.sock)
        else:
            ws.close()


def refused_reset(port, token):
    ws = _open(port)
    try:
        accepted, message = _join(ws, "forged")
        if accepted:
            raise Refused("forged token accepted")
        if not message.startswith("unauthorized"):  # refused for another reason: counted
            raise Refused(f"connect refused: {_reason(message)}")
    finally:
        _reset(ws.sock)


def never_joined_reset(port, token):
    _reset(_open(port).sock)


def sse_reset(port, token):
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    except ConnectionRefusedError:
        raise Refused("connect refused") from None
    try:
        sock.sendall(f"GET /api/stream?topics=bench HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                raise Refused(f"closed before its head: {head[:60]!r}")
            head += chunk
        if not head.startswith(b"HTTP/1.1 200"):
            raise Refused(head.split(b"\r\n", 1)[0].decode(errors="replace"))
    finally:
        _reset(sock)


def polling(port, token):
    url = f"http://127.0.0.1:{port}/socket.io/?EIO=4&transport=polling"
    with requests.Session() as session:  # its own connection, closed with it
        try:
            opened = session.get(url, timeout=TIMEOUT)
        except requests.ConnectionError as exc:
            if isinstance(exc.__context__, ConnectionRefusedError) or "refused" in str(exc):
                raise Refused("connect refused") from None
            raise
        if opened.status_code != 200:
            raise Refused(f"HTTP {opened.status_code}")
        sid = json.loads(opened.text[1:].split("\x1e", 1)[0])["sid"]
        posted = session.post(f"{url}&sid={sid}", timeout=TIMEOUT,
                              data=f"40{NAMESPACE}," + json.dumps({"token": token}))
        if posted.status_code != 200:
            raise Refused(f"HTTP {posted.status_code}")
        answer = session.get(f"{url}&sid={sid}", timeout=TIMEOUT)
        if f"40{NAMESPACE}" not in answer.text:
            raise Refused(f"connect refused: {answer.status_code} {answer.text[:60]!r}")
        session.post(f"{url}&sid={sid}", data="1", timeout=TIMEOUT)  # Engine.IO's CLOSE


SESSIONS = {
    "joined_reset": lambda port, token: joined(port, token, reset=True),
    "refused_reset": refused_reset,
    "never_joined_reset": never_joined_reset,
    "joined_closed": lambda port, token: joined(port, token, reset=False),
    "sse_reset": sse_reset,
    "polling": polling,
}


def client_process(kind, port, token, threads, claimed, done, total, results):
    """Runs sessions of ``kind`` in ``threads`` threads until ``total`` have been
    claimed (across processes); puts its outcomes, by reason, on ``results``."""
    session = SESSIONS[kind]
    outcomes = collections.Counter()
    lock = threading.Lock()

    def run():
        while True:
            with claimed.get_lock():
                if claimed.value >= total:
                    return
                claimed.value += 1
            try:
                session(port, token)
                outcome = "ok"
            except Refused as exc:
                outcome = f"refused: {exc}"
            except Exception as exc:  # noqa: BLE001  (a timeout, a reset: counted, not hidden)
                outcome = f"error: {type(exc).__name__}: {str(exc)[:60]}"
            with lock:
                outcomes[outcome] += 1
            with done.get_lock():
                done.value += 1

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    results.put(dict(outcomes))


# -- the measuring process ----------------------------------------------------------


def figures(server):
    """This web process's figures from /metrics: ``herald_*`` name -> value."""
    text = requests.get(server.url + "/metrics", timeout=10).text
    mine = f':{server.process.pid}"'
    found = {}
    for line in text.splitlines():
        if line.startswith("herald_") and mine in line and "_bucket" not in line:
            name, value = line.rsplit(" ", 1)
            found[name.split("{", 1)[0]] = float(value)
    return found


def drain(server, ended, settle):
    """Wait until the server reports no session open (at most DRAIN_WAIT s), then until
    ``settle`` s after ``ended`` (the wheels let ended connections go); the open
    counts last seen and the seconds waited for them."""
    began = time.monotonic()
    while True:
        now = figures(server)
        open_ = {"sockets": now.get("herald_connected_clients", -1),
                 "streams": now.get("herald_sse_streams", -1)}
        if (open_["sockets"] == 0 and open_["streams"] == 0) or time.monotonic() - began > DRAIN_WAIT:
            break
        time.sleep(0.5)
    waited = time.monotonic() - began
    time.sleep(max(0.0, ended + settle - time.monotonic()))
    return open_, waited


def slope(points):
    """Least-squares slope of (x, y) points, or None for fewer than 3."""
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else None


def run_sessions(ctx, kind, server, token, args, claimed, done, total, samples, checkpoints):
    """Sessions of ``kind`` until ``done`` reaches ``total``, RSS read as ``done`` passes each
    of ``checkpoints`` (a list, consumed); their outcomes, by reason."""
    results = ctx.Queue()
    processes = [ctx.Process(target=client_process,
                             args=(kind, server.port, token, args.threads, claimed, done, total,
                                   results))
                 for _ in range(args.workers)]
    for process in processes:
        process.start()
    outcomes = collections.Counter()
    received = 0

    def sample():
        count = done.value
        census = server.census(b"count\n", timeout=120) if args.census else None
        samples.append((count, rss_mb(server.process.pid), census))
    last_progress, last_done = time.monotonic(), done.value
    try:
        while received < len(processes):
            count = done.value
            if checkpoints and count >= checkpoints[0]:
                while checkpoints and count >= checkpoints[0]:
                    checkpoints.pop(0)
                sample()
            if count != last_done:
                last_progress, last_done = time.monotonic(), count
            elif time.monotonic() - last_progress > 6 * TIMEOUT:
                raise RuntimeError(f"{kind}: no session ended for {6 * TIMEOUT} s at {count}")
            try:
                outcomes.update(results.get(timeout=0.01))
                received += 1
            except Exception:  # noqa: BLE001  (queue.Empty: still running)
                pass
    finally:
        for process in processes:
            process.join(15)
            if process.is_alive():
                process.terminate()
                process.join(5)
    if checkpoints and done.value >= checkpoints[0]:  # the last ended as the results came
        checkpoints.clear()
        sample()
    return outcomes


def churn(ctx, kind, server, token, args):
    claimed, done = ctx.Value("q", 0), ctx.Value("q", 0)
    before = figures(server)
    rss_start = rss_mb(server.process.pid)
    samples = []
    warm_outcomes = run_sessions(ctx, kind, server, token, args, claimed, done, args.warmup,
                                 samples, [])
    warm_open, warm_wait = drain(server, time.monotonic(), args.settle)
    rss_warm = rss_mb(server.process.pid)
    census_warm = server.census(b"collect\n", timeout=120) if args.census else None
    checkpoints = list(range(args.every, args.sessions, args.every))
    checkpoints = [c for c in checkpoints if c > args.warmup] + [args.sessions]
    began = time.monotonic()
    outcomes = run_sessions(ctx, kind, server, token, args, claimed, done, args.sessions,
                            samples, checkpoints)
    elapsed = time.monotonic() - began
    end_open, end_wait = drain(server, time.monotonic(), args.settle)
    rss_end = rss_mb(server.process.pid)
    census_end = server.census(b"collect\n", timeout=120) if args.census else None
    after = figures(server)
    outcomes.update(warm_outcomes)
    measured = args.sessions - args.warmup
    half = [(count, rss * MB) for count, rss, _ in samples if count >= args.sessions / 2]
    late = slope(half)
    server_refusals = {name: after.get(name, 0) - before.get(name, 0)
                       for name in ("herald_connections_refused_total",
                                    "herald_sessions_refused_per_address_total",
                                    "herald_connects_deferred_total",
                                    "herald_join_timeouts_total",
                                    "herald_abusive_disconnects_total")}
    result = {
        "kind": kind, "sessions": args.sessions, "warmup": args.warmup,
        "rss_mb": {"start": rss_start, "warm": rss_warm, "end": rss_end},
        "growth_mb": rss_end - rss_warm,
        "growth_bytes_per_session": (rss_end - rss_warm) * MB / measured,
        "slope_last_half_bytes_per_session": late,
        "samples": [{"sessions": c, "rss_mb": r} for c, r, _ in samples],
        "sessions_per_second": measured / elapsed, "seconds": elapsed,
        "outcomes": dict(outcomes),
        "not_ok": sum(n for o, n in outcomes.items() if o != "ok"),
        "server_counters": server_refusals,
        "open_at_drain": {"warm": warm_open, "end": end_open},
        "drain_seconds": {"warm": warm_wait, "end": end_wait},
    }
    if args.census:
        result["census"] = census_report(census_warm, census_end, samples, measured)
    return result


def _short(census):
    """A census without its type counts."""
    return {k: v for k, v in census.items() if k != "types"}


def census_report(warm, end, samples, measured):
    """What the census saw: drained after the warm-up and at the end (its full collection's
    garbage, by type), while the sessions ran, and the types whose live objects grew; and
    per session after the warm-up, the growth of what Python's allocator has handed out
    (bytes in pymalloc's blocks, and blocks of any size) and of glibc's heap in use."""
    grew = {name: end["types"].get(name, 0) - warm["types"].get(name, 0)
            for name in set(warm["types"]) | set(end["types"])}
    heap = (end["heap"]["in_use"] - warm["heap"]["in_use"]) if warm["heap"] else None
    return {
        "per_session": {
            "pymalloc_bytes": (end["pymalloc"]["allocated"] - warm["pymalloc"]["allocated"]) / measured,
            "blocks": (end["allocated_blocks"] - warm["allocated_blocks"]) / measured,
            "glibc_in_use_bytes": None if heap is None else heap / measured},
        "warm": _short(warm), "end": _short(end),
        "running": [{"at": c, **_short(census)} for c, _, census in samples if census],
        "types_grown": dict(sorted(((n, d) for n, d in grew.items() if d), key=lambda nd: -nd[1])[:30]),
    }


def table(results):
    lines = ["| kind | sessions | sessions/s | RSS warm-up → end (MB) | growth (MB) | "
             "growth (B/session) | slope, last half (B/session) | refused / errors |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        late = r["slope_last_half_bytes_per_session"]
        not_ok = ", ".join(f"{o} ×{n}" for o, n in sorted(r["outcomes"].items()) if o != "ok") or "0"
        lines.append(
            f"| {r['kind']} | {r['sessions']:,} | {r['sessions_per_second']:.0f} | "
            f"{r['rss_mb']['warm']:.1f} → {r['rss_mb']['end']:.1f} | {r['growth_mb']:+.1f} | "
            f"{r['growth_bytes_per_session']:+.0f} | "
            f"{'–' if late is None else f'{late:+.0f}'} | {not_ok} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50_000, help="of each kind")
    parser.add_argument("--warmup", type=int, default=2_000)
    parser.add_argument("--every", type=int, default=5_000, help="sessions between RSS samples")
    parser.add_argument("--workers", type=int, default=2, help="client processes")
    parser.add_argument("--threads", type=int, default=2, help="threads in each client process")
    parser.add_argument("--settle", type=float, default=30.0,
                        help="seconds after the last session before a drained RSS is read")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="comma-separated, in order (a kind may come twice)")
    parser.add_argument("--census", action="store_true",
                        help="serve with bench/churn_census.py: live objects by type, wheels, "
                             "glibc's heap and the cyclic garbage, at every sample")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    if args.sessions <= args.warmup:
        parser.error("--sessions must be more than --warmup")
    ctx = multiprocessing.get_context("fork")  # before any thread of this process

    folder = Path(tempfile.mkdtemp(prefix="herald-bench-"))
    redis_server = RedisServer(folder)
    redis_server.start()
    client = redis_server.client()
    accounts.create_user(client, "ann", "ann-password")
    subscriptions.add(client, "ann", ["bench"], limit=10)
    if args.census:
        server = CensusServer(redis_server.url, folder, script="bench/churn_census.py", **SERVER_ENV)
    else:
        server = LiveServer(redis_server.url, folder, **SERVER_ENV)
    server.start()
    results = []
    try:
        rss_started = rss_mb(server.process.pid)
        for kind in kinds:
            # A token per kind: a kind takes minutes, a token lasts TOKEN_TTL (an hour).
            result = churn(ctx, kind, server, server.token("ann", "ann-password"), args)
            results.append(result)
            r = result
            print(f"{kind}: {r['sessions_per_second']:.0f}/s; RSS {r['rss_mb']['warm']:.1f} -> "
                  f"{r['rss_mb']['end']:.1f} MB ({r['growth_bytes_per_session']:+.0f} B/session, "
                  f"last half {r['slope_last_half_bytes_per_session'] or 0:+.0f}); "
                  f"not ok: {r['not_ok']}; server: {r['server_counters']}", flush=True)
            if args.census:
                c = r["census"]
                print(f"  census drained, end: {json.dumps(c['end'])}")
                print(f"  live memory grown per session since the warm-up: {c['per_session']}")
                for x in c["running"]:
                    print(f"  at {x['at']}: {x['connections']} Connections and "
                          f"{x['engine_sockets']} Engine.IO sockets alive, wheels {x['wheels']}, "
                          f"heap {x['heap']}, pymalloc {x['pymalloc']}")
                print(f"  live objects grown since the warm-up: {json.dumps(c['types_grown'])}", flush=True)
        rss_finished = rss_mb(server.process.pid)
    finally:
        server.stop()
        client.close()
        redis_server.stop()
    print()
    print(table(results))
    print(f"\nweb process RSS: {rss_started:.1f} MB started, {rss_finished:.1f} MB after every kind")
    path = save("churn", {"args": vars(args), "server_env": SERVER_ENV,
                          "rss_mb_started": rss_started, "rss_mb_finished": rss_finished,
                          "results": results})
    print(f"written to {path}")


if __name__ == "__main__":
    main()
