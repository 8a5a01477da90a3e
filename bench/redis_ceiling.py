"""What one Redis carries: notifications a second through Herald's atomic publish script.

Every notification is one run of the publish script (app/stream/publish.py):
an XADD to ``herald:stream`` (trimmed to HISTORY_MAX) and a PUBLISH of the live
copy on ``herald:live``, which Redis then writes to every subscriber (one per
web process, plus the ZeroMQ bridge's egress when it runs). So the ceiling is
Redis's own CPU per publish, and it grows with the subscribers.

``--publishers`` processes each send the script ``--pipeline`` at a time for
``--seconds``; ``--subscribers`` processes read ``herald:live`` as a relay does.
Reported for each number of subscribers: notifications stored a second, the
Redis process's CPU (share of one core) and its CPU per notification, and the
ceiling that implies (one core's worth):

On a Redis Cluster (``--redis cluster``: 3 masters and 3 replicas on this
machine, tests/redis_cluster.py) the publishers send the script to the master
of the stream's slot, and the subscribers subscribe through the cluster client
as the relay does (which puts them on the master of ``herald:live``'s slot).
Reported there: the busiest node's CPU per publish (the system's ceiling is
that node's), and all nodes' together. ``--redis single,cluster`` measures both
in one run, as docs/capacity.md reports them:

    .venv/bin/python bench/redis_ceiling.py [--subscribers 1,16,100] [--seconds 5] [--redis single,cluster]
"""
import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.redis_client import connect, is_cluster  # noqa: E402
from app.stream.keys import EPOCH, LAST_ID, LIVE, STREAM  # noqa: E402
from app.stream.publish import IDEMPOTENCY_TTL, Bus, prepare  # noqa: E402
from tests.redis_cluster import RedisCluster  # noqa: E402
from tests.support import RedisServer, cpu_seconds  # noqa: E402

ENVELOPE = {"topic": "bench.ceiling", "title": "a notification of a usual size",
            "body": "x" * 120, "severity": "info", "data": {"n": 1, "host": "web-1"}}


def publisher(url, seconds, pipeline, counter):
    """Publish as fast as Redis takes it for ``seconds``; add the count to ``counter``.
    (On a cluster: to the master of the stream's slot, on a plain client of that node.)"""
    client = connect(url)
    if is_cluster(client):
        client = client.get_redis_connection(client.get_node_from_key(STREAM))
    bus = Bus(client)
    item = prepare(ENVELOPE)
    keys = [STREAM, EPOCH, LAST_ID]  # no idempotency key, credential or quota (app/stream/publish_scripts.py)
    args = [LIVE, bus.history_max, IDEMPOTENCY_TTL, "f", "", 0, 0, 0,
            item.raw, item.topic, item.user, item.ts]
    done, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        pipe = client.pipeline(transaction=False)
        for _ in range(pipeline):
            bus._script(keys=keys, args=args, client=pipe)
        pipe.execute()
        done += pipeline
    with counter.get_lock():
        counter.value += done


def subscriber(url, ready, stop, counter):
    """Read herald:live until ``stop``, as a web process's relay does."""
    pubsub = connect(url).pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(LIVE)
    ready.set()
    got = 0
    while not stop.is_set():
        if pubsub.get_message(timeout=0.2) is not None:
            got += 1
    with counter.get_lock():
        counter.value += got


def measure(url, pids, subscribers, publishers, seconds, pipeline):
    stop = multiprocessing.Event()
    received = multiprocessing.Value("q", 0)
    published = multiprocessing.Value("q", 0)
    readers = []
    for _ in range(subscribers):
        ready = multiprocessing.Event()
        process = multiprocessing.Process(target=subscriber, args=(url, ready, stop, received))
        process.start()
        ready.wait(10)
        readers.append(process)
    writers = [multiprocessing.Process(target=publisher, args=(url, seconds, pipeline, published))
               for _ in range(publishers)]
    before, started = [cpu_seconds([pid]) for pid in pids], time.monotonic()
    for process in writers:
        process.start()
    for process in writers:
        process.join(seconds + 60)
    elapsed = time.monotonic() - started
    used = [cpu_seconds([pid]) - was for pid, was in zip(pids, before, strict=True)]
    cpu, total = max(used), sum(used)
    stop.set()
    for process in readers:
        process.join(30)
    rate = published.value / elapsed
    per = cpu / published.value * 1e6 if published.value else None
    return {"subscribers": subscribers, "published_per_s": round(rate),
            "redis_cpu_share": round(cpu / elapsed, 2),
            "redis_cpu_us_per_publish": round(per, 1) if per else None,
            "all_nodes_cpu_us_per_publish": round(total / published.value * 1e6, 1) if per else None,
            "ceiling_per_s": round(1e6 / per) if per else None,
            "received_per_subscriber": received.value // max(1, subscribers)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", default="1,4,16")
    parser.add_argument("--publishers", type=int, default=2)
    parser.add_argument("--pipeline", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--redis", default="single", help="single, cluster, or both: single,cluster")
    args = parser.parse_args()
    results = []
    for kind in args.redis.split(","):
        folder = Path(tempfile.mkdtemp(prefix="herald-ceiling-"))
        server = RedisServer(folder) if kind == "single" else RedisCluster(folder)
        server.start()
        try:
            nodes = [server] if kind == "single" else server.nodes
            pids = [node.process.pid for node in nodes]
            for count in [int(n) for n in args.subscribers.split(",")]:
                server.client().delete(STREAM)
                results.append(dict(measure(server.url, pids, count, args.publishers, args.seconds,
                                            args.pipeline), redis=kind))
                print(json.dumps(results[-1]), flush=True)
        finally:
            server.stop()
    print("| Redis | subscribers (web processes) | stored /s | busiest node's CPU | its CPU per publish "
          "| all nodes' CPU per publish | ceiling (the busiest node's core) |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['redis']} | {r['subscribers']} | {r['published_per_s']:,} | "
              f"{r['redis_cpu_share']:.0%} | {r['redis_cpu_us_per_publish']} µs | "
              f"{r['all_nodes_cpu_us_per_publish']} µs | {r['ceiling_per_s']:,}/s |")
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "redis_ceiling.json").write_text(
        json.dumps({"measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "args": vars(args), "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
