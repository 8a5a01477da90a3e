"""Webhook delivery: throughput (deliveries/s) and latency (publish -> receiver) to local receivers.

    .venv/bin/python bench/webhooks.py [--latency-count 200 --gap 20] [--count 3000] [--endpoints 1,4]

A real redis-server, the real worker (``python -m workers.webhooks``) and
stdlib HTTP receivers on loopback answering 200 at once (a receiver's own
cost is part of the figures: it runs in this process, in threads).

- latency: one notification every ``--gap`` ms (each measured on an otherwise
  idle system), from just before ``publish()`` to the receiver having read
  the POST; both clocks are this machine's wall clock;
- throughput: ``--count`` notifications published at once, for each number
  of endpoints in ``--endpoints`` (every endpoint takes every notification),
  deliveries per second from the first publish to the last delivery.

Results: bench/results/webhooks.json.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.ops import processes  # noqa: E402
from app.stream.publish import Bus  # noqa: E402
from app.webhooks import outbound, store  # noqa: E402
from tests.support import RedisServer, free_port, wait_until  # noqa: E402

RESULTS = ROOT / "bench" / "results"
ALLOW = "127.0.0.0/8"


class Receiver:
    def __init__(self):
        self.port = free_port()
        self.arrivals = {}  # notification id -> time.time() of arrival
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                now = time.time()
                notification = json.loads(body)["id"]
                with receiver.lock:
                    receiver.arrivals.setdefault(notification, now)
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self):
        with self.lock:
            return len(self.arrivals)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run(args):
    folder = Path(tempfile.mkdtemp(prefix="herald-bench-webhooks-"))
    redis_server = RedisServer(folder)
    redis_server.start()
    client = redis_server.client()
    worker, receivers, log = None, [], open(folder / "worker.log", "ab")
    results = {"date": time.strftime("%Y-%m-%d"), "throughput": []}
    try:
        allowed = outbound.allow_list(ALLOW)
        bus = Bus(client)

        def setup(endpoints):
            for record in store.list_all(client):
                store.delete(client, record["id"])
            made = []
            for _ in range(endpoints):
                receiver = Receiver()
                receivers.append(receiver)
                store.create(client, {"url": f"http://127.0.0.1:{receiver.port}/hook",
                                      "topics": ["bench"]}, "bench", allowed=allowed)
                made.append(receiver)
            time.sleep(1.5)  # the worker reloads and starts the senders
            return made

        worker = subprocess.Popen([sys.executable, "-m", "workers.webhooks"], cwd=ROOT,
                                  env=dict(os.environ, REDIS_URL=redis_server.url,
                                           WEBHOOK_ALLOW=ALLOW, PYTHONUNBUFFERED="1"),
                                  stdout=log, stderr=subprocess.STDOUT)

        [receiver] = setup(1)
        latencies = []
        for i in range(args.latency_count):
            start = time.time()
            notification = bus.publish("bench.latency", f"latency {i}")
            wait_until(lambda: notification in receiver.arrivals, timeout=10, interval=0.0005)
            latencies.append((receiver.arrivals[notification] - start) * 1000)
            time.sleep(args.gap / 1000)
        results["latency_ms"] = {"count": len(latencies),
                                 "median": round(statistics.median(latencies), 2),
                                 "p99": round(percentile(latencies, 0.99), 2),
                                 "max": round(max(latencies), 2)}
        print(f"latency over {len(latencies)}: median {results['latency_ms']['median']} ms, "
              f"p99 {results['latency_ms']['p99']} ms, max {results['latency_ms']['max']} ms")

        for endpoints in args.endpoints:
            made = setup(endpoints)
            start = time.time()
            for first in range(0, args.count, 100):
                bus.publish_envelopes([{"topic": "bench.load", "title": f"load {n}"}
                                       for n in range(first, min(args.count, first + 100))])
            published = time.time() - start
            wait_until(lambda: all(r.count() >= args.count for r in made), timeout=600,
                       interval=0.01, message="every delivery")
            elapsed = max(max(r.arrivals.values()) for r in made) - start
            rate = endpoints * args.count / elapsed
            results["throughput"].append({"endpoints": endpoints, "notifications": args.count,
                                          "deliveries": endpoints * args.count,
                                          "seconds": round(elapsed, 2),
                                          "publish_seconds": round(published, 2),
                                          "deliveries_per_second": round(rate)})
            print(f"throughput, {endpoints} endpoint(s): {endpoints * args.count} deliveries in "
                  f"{elapsed:.2f} s = {rate:.0f}/s (publishing took {published:.2f} s)")
    finally:
        processes.stop(worker, 20)
        log.close()
        for receiver in receivers:
            receiver.stop()
        client.close()
        redis_server.stop()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "webhooks.json").write_text(json.dumps(results, indent=2) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency-count", type=int, default=200)
    parser.add_argument("--gap", type=float, default=20, help="ms between latency samples")
    parser.add_argument("--count", type=int, default=3000, help="notifications for throughput")
    parser.add_argument("--endpoints", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1, 4])
    run(parser.parse_args())


if __name__ == "__main__":
    main()
