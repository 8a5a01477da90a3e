"""What a web process holding idle connections costs while nothing is published:
its CPU and how often it sleeps and wakes (voluntary context switches), once the
connections' pings have started (python-engineio pings every 25 s). With ``--sse``
the clients follow GET /api/stream (Server-Sent Events) instead: each stream's
``: heartbeat`` is due every SSE_HEARTBEAT (15) seconds.

    .venv/bin/python bench/idle_wakes.py [--clients 3000] [--settle 27] [--seconds 30] [--sse]
"""
import argparse
import json
import time
from pathlib import Path

from common import save, stack  # first: it puts the project on sys.path
from fanout import LoadGenerators

from tests.support import LiveServer, cpu_seconds  # noqa: E402


def switches(pid):
    """The process's voluntary context switches so far (each a sleep that ended)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches"):
            return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=3000)
    parser.add_argument("--settle", type=float, default=27, help="seconds before measuring")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--sse", action="store_true", help="Server-Sent Events clients")
    args = parser.parse_args()
    # Every load generator connects from 127.0.0.1: no per-address cap here.
    with stack(MAX_CONNECTIONS_PER_ADDRESS="0", MAX_SESSIONS_PER_ADDRESS="0") as (_r, _c, server, _k):
        token = LiveServer.token(server, "bench", "bench-password")
        generators = LoadGenerators(server.url, token, args.clients, 2, idle=True, sse=args.sse)
        try:
            pid = server.process.pid
            time.sleep(args.settle)  # the first pings are due 25 s after each connect
            cpu, wakes, started = cpu_seconds([pid]), switches(pid), time.monotonic()
            time.sleep(args.seconds)
            elapsed = time.monotonic() - started
            result = {"clients": generators.ready, "sse": args.sse, "seconds": elapsed,
                      "cpu_share": (cpu_seconds([pid]) - cpu) / elapsed,
                      "wakes_per_s": (switches(pid) - wakes) / elapsed}
        finally:
            generators.stop()
    kind = "event streams" if args.sse else "connections"
    print(f"{result['clients']} idle {kind}: {result['cpu_share']:.1%} of a core, "
          f"{result['wakes_per_s']:.0f} wakes/s")
    save("idle_wakes", result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
