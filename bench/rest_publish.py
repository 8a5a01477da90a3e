"""REST publishes a second into one web process: ``POST /api/notifications`` with an API key.

``--clients`` threads, each with its own keep-alive connection, publish one
notification at a time for ``--seconds``; reported: publishes stored a second,
the call's median and p99, and the web process's CPU (share of one core, and
per publish). One web process, one Redis; nobody subscribed, so this is the
publish path alone (auth, rate limit, validation, the atomic script).

    .venv/bin/python bench/rest_publish.py [--clients 8] [--seconds 5]
"""
import argparse
import threading
import time

import requests
from common import percentile, save, stack  # first: it puts the project on sys.path

from tests.support import cpu_seconds  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    with stack(RATELIMIT_API_KEY="100000 per second") as (_redis_server, client, server, key):
        url = server.url + "/api/notifications"
        durations, lock = [], threading.Lock()

        def publish_for(seconds):
            session = requests.Session()
            session.headers["Authorization"] = f"Bearer {key}"
            mine, end = [], time.monotonic() + seconds
            n = 0
            while time.monotonic() < end:
                started = time.perf_counter()
                reply = session.post(url, json={"topic": "bench.rest", "title": f"n{n}"}, timeout=10)
                mine.append((time.perf_counter() - started) * 1000)
                assert reply.status_code == 201, reply.text
                n += 1
            with lock:
                durations.extend(mine)

        publish_for(0.5)  # warm up
        durations.clear()
        stored_before = client.xlen("herald:stream")
        cpu, started = cpu_seconds([server.process.pid]), time.monotonic()
        threads = [threading.Thread(target=publish_for, args=(args.seconds,)) for _ in range(args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(args.seconds + 30)
        elapsed, cpu = time.monotonic() - started, cpu_seconds([server.process.pid]) - cpu
        stored = client.xlen("herald:stream") - stored_before
    result = {"clients": args.clients, "publishes_per_s": round(stored / elapsed),
              "call_median_ms": round(percentile(durations, 0.5), 2),
              "call_p99_ms": round(percentile(durations, 0.99), 2),
              "server_cpu_share": round(cpu / elapsed, 2),
              "server_cpu_us_per_publish": round(cpu / stored * 1e6) if stored else None}
    print(result)
    print("written to", save("rest_publish", result))


if __name__ == "__main__":
    main()
