"""REST publishes a second into one web process, beside the floor: ``POST /api/notifications``.

``--clients`` threads, each with its own keep-alive connection, publish one
notification at a time for ``--seconds`` with an API key; reported: publishes
stored a second, the call's median and p99, and the server's CPU (share of
one core, and per publish). One Redis; nobody subscribed, so this is the
publish path alone. Measured in one run, with the same clients, one after the
other:

- Herald, one web process (``python wsgi.py``): auth, rate limit, validation,
  the atomic script (the top-level keys of the result);
- the floor, bench/peers/rest_floor.py: a bare gevent WSGI endpoint that checks
  the same API key the same way and runs Herald's own publish script (``floor``);

and ``floor_ratio``, Herald's CPU per publish over the floor's.

    .venv/bin/python bench/rest_publish.py [--clients 8] [--seconds 5]
"""
import argparse
import http.client
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from common import ROOT, percentile, save, stack  # first: it puts the project on sys.path

from tests.support import cpu_seconds, free_port  # noqa: E402

STREAM = "herald:stream"


class Floor:
    """bench/peers/rest_floor.py on a free port, on ``redis_url``."""

    def __init__(self, redis_url, folder):
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = open(Path(folder) / "rest_floor.log", "wb")
        env = dict(os.environ, REDIS_URL=redis_url, PORT=str(port))
        self.process = subprocess.Popen([sys.executable, "bench/peers/rest_floor.py"], cwd=ROOT,
                                        env=env, stdout=subprocess.PIPE, stderr=self.log)
        line = self.process.stdout.readline().decode().strip()
        if line != "listening":
            self.stop()
            raise SystemExit(f"the REST floor did not start: {line!r}")

    def stop(self):
        self.process.terminate()
        self.process.wait(15)
        self.process.stdout.close()
        self.log.close()


def measure(url, key, pid, client, clients, seconds):
    """``clients`` keep-alive publishers on ``url`` (``http://host:port``) for ``seconds``; the figures,
    with the CPU of process ``pid``."""
    host, port = url.removeprefix("http://").split(":")
    durations, failures, lock = [], [], threading.Lock()

    def publish_for(seconds):
        # http.client, not requests: a fifth of the client's CPU per call, so that the
        # clients (sharing the machine's cores) hold the servers back as little as can be.
        connection = http.client.HTTPConnection(host, port, timeout=10)
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        mine, end, n = [], time.monotonic() + seconds, 0
        try:
            while time.monotonic() < end:
                body = b'{"topic":"bench.rest","title":"n%d"}' % n
                started = time.perf_counter()
                connection.request("POST", "/api/notifications", body, headers)
                reply = connection.getresponse()
                text = reply.read()
                mine.append((time.perf_counter() - started) * 1000)
                if reply.status != 201:
                    raise AssertionError(f"{reply.status}: {text[:200]}")
                n += 1
        except Exception as exc:  # reported after the run; the others go on
            failures.append(repr(exc))
        finally:
            connection.close()
        with lock:
            durations.extend(mine)

    publish_for(0.5)  # warm up
    durations.clear()
    stored_before = client.xlen(STREAM)
    cpu, started = cpu_seconds([pid]), time.monotonic()
    threads = [threading.Thread(target=publish_for, args=(seconds,)) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 30)
    elapsed, cpu = time.monotonic() - started, cpu_seconds([pid]) - cpu
    stored = client.xlen(STREAM) - stored_before
    if failures:
        raise SystemExit(f"publishes failed: {failures[:3]}")
    return {"publishes_per_s": round(stored / elapsed),
            "call_median_ms": round(percentile(durations, 0.5), 2),
            "call_p99_ms": round(percentile(durations, 0.99), 2),
            "server_cpu_share": round(cpu / elapsed, 2),
            "server_cpu_us_per_publish": round(cpu / stored * 1e6) if stored else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    with stack(RATELIMIT_API_KEY="100000 per second") as (redis_server, client, server, key):
        # A history as long as HISTORY_MAX is trimmed on every publish: both start alike.
        herald = measure(server.url, key, server.process.pid, client,
                         args.clients, args.seconds)
        server.stop()  # its relay and background loops are idle; out of the way all the same
        floor_server = Floor(redis_server.url, Path(server.log_path).parent)
        try:
            floor = measure(floor_server.url, key, floor_server.process.pid,
                            client, args.clients, args.seconds)
        finally:
            floor_server.stop()
    result = {"clients": args.clients, "seconds": args.seconds, **herald, "floor": floor,
              "floor_ratio": round(herald["server_cpu_us_per_publish"]
                                   / floor["server_cpu_us_per_publish"], 2)}
    print(result)
    print("written to", save("rest_publish", result))


if __name__ == "__main__":
    main()
