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
that node's), and all nodes' together. ``--redis sharded`` is the same cluster
with a sharded history (``--shards`` shards, STREAM_SHARDS: app/stream/shards.py):
each shard's scripts go to its master, each simulated web process follows every
shard (``--follow all``) or one (``one``) by SSUBSCRIBE on its master, as a web
process follows the shards its connections need. One run measures what
``--redis`` lists, as docs/capacity.md reports them:

    .venv/bin/python bench/redis_ceiling.py [--subscribers 1,16,100] [--seconds 5] \
        [--redis single,cluster,sharded] [--shards 3] [--follow all,one]
"""
import argparse
import json
import multiprocessing
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.redis_client import connect, is_cluster  # noqa: E402
from app.stream.keys import LIVE  # noqa: E402
from app.stream.publish import Bus, prepare  # noqa: E402
from app.stream.shards import Shards  # noqa: E402
from tests.redis_cluster import RedisCluster  # noqa: E402
from tests.support import RedisServer, cpu_seconds  # noqa: E402

ENVELOPE = {"topic": "bench.ceiling", "title": "a notification of a usual size",
            "body": "x" * 120, "severity": "info", "data": {"n": 1, "host": "web-1"}}


def publisher(url, shard_count, seconds, pipeline, counter):
    """Publish as fast as Redis takes it for ``seconds``, ``pipeline`` at a time to each
    shard in turn (its own topic, so each goes to its shard, as the Bus routes them);
    add the count to ``counter``. On a cluster each shard's scripts go to the master of
    its slot, on a plain client of that node, as the Bus's do."""
    client = connect(url)
    shards = Shards(shard_count)
    bus = Bus(client, shards=shards)
    calls = []
    for shard in shards:
        topic = next(f"bench{n}.ceiling" for n in range(10_000)
                     if shards.of_topic(f"bench{n}.ceiling") == shard)
        item = prepare(dict(ENVELOPE, topic=topic))
        node = client.get_redis_connection(client.get_node_from_key(shard.stream)) \
            if is_cluster(client) else client
        # no idempotency key, credential or quota (app/stream/publish_scripts.py)
        calls.append((node, *bus.script_call(shard, [item], "f")))
    done, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        for node, keys, args in calls:
            pipe = node.pipeline(transaction=False)
            for _ in range(pipeline):
                bus._script(keys=keys, args=args, client=pipe)
            pipe.execute()
            done += pipeline
    with counter.get_lock():
        counter.value += done


def _read(pubsub, stop, got):
    while not stop.is_set():
        if pubsub.get_message(timeout=0.2) is not None:
            got.append(1)


def subscriber(url, shard_count, follows, ready, stop, counter):
    """Read the live copy until ``stop``, as a web process's relay does: herald:live
    through the (cluster) client with one shard; with more, the channel of each shard
    in ``follows`` by SSUBSCRIBE on its master (a thread each, as the relay's lanes)."""
    client, shards, got = connect(url), Shards(shard_count), []
    if shard_count == 1:
        pubsubs = [client.pubsub(ignore_subscribe_messages=True)]
        pubsubs[0].subscribe(LIVE)
    else:
        pubsubs = []
        for k in follows:
            live = shards[k].live
            node = client.get_redis_connection(client.get_node_from_key(live)) \
                if is_cluster(client) else client
            pubsubs.append(node.pubsub(ignore_subscribe_messages=True))
            pubsubs[-1].ssubscribe(live)
    ready.set()
    threads = [threading.Thread(target=_read, args=(p, stop, got)) for p in pubsubs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with counter.get_lock():
        counter.value += len(got)


def measure(url, pids, subscribers, publishers, seconds, pipeline, shard_count=1, follow="all"):
    """One run: ``subscribers`` web processes, each following every shard (``follow``
    "all") or one (``follow`` "one": the i-th the i-th shard, round the shards)."""
    stop = multiprocessing.Event()
    received = multiprocessing.Value("q", 0)
    published = multiprocessing.Value("q", 0)
    readers = []
    for i in range(subscribers):
        ready = multiprocessing.Event()
        follows = range(shard_count) if follow == "all" else [i % shard_count]
        process = multiprocessing.Process(target=subscriber, args=(
            url, shard_count, list(follows), ready, stop, received))
        process.start()
        ready.wait(10)
        readers.append(process)
    writers = [multiprocessing.Process(target=publisher, args=(url, shard_count, seconds,
                                                                pipeline, published))
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
    return {"subscribers": subscribers, "shards": shard_count,
            "follow": follow if shard_count > 1 else "all", "published_per_s": round(rate),
            "redis_cpu_share": round(cpu / elapsed, 2),
            "redis_cpu_us_per_publish": round(per, 1) if per else None,
            "all_nodes_cpu_us_per_publish": round(total / published.value * 1e6, 1) if per else None,
            "ceiling_per_s": round(1e6 / per) if per else None,
            "received_per_subscriber": received.value // max(1, subscribers),
            "nodes_cpu_us_per_publish": [round(u / published.value * 1e6, 1) if per else None
                                         for u in used]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", default="1,4,16")
    parser.add_argument("--publishers", type=int, default=2)
    parser.add_argument("--pipeline", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--redis", default="single",
                        help="any of single, cluster (one shard), sharded (a cluster with "
                             "--shards shards), comma-separated: measured in one run")
    parser.add_argument("--shards", type=int, default=3, help="STREAM_SHARDS for 'sharded'")
    parser.add_argument("--follow", default="all,one",
                        help="for 'sharded': each web process follows all shards, one, or both")
    args = parser.parse_args()
    results = []
    for kind in args.redis.split(","):
        folder = Path(tempfile.mkdtemp(prefix="herald-ceiling-"))
        server = RedisServer(folder) if kind == "single" else RedisCluster(folder)
        server.start()
        shard_count = args.shards if kind == "sharded" else 1
        try:
            nodes = [server] if kind == "single" else server.nodes
            pids = [node.process.pid for node in nodes]
            for follow in (args.follow.split(",") if kind == "sharded" else ["all"]):
                for count in [int(n) for n in args.subscribers.split(",")]:
                    for shard in Shards(shard_count):
                        server.client().delete(shard.stream)
                    results.append(dict(measure(server.url, pids, count, args.publishers,
                                                args.seconds, args.pipeline, shard_count, follow),
                                        redis=kind))
                    print(json.dumps(results[-1]), flush=True)
        finally:
            server.stop()
    print("| Redis | shards | each web process follows | subscribers (web processes) | stored /s "
          "| busiest node's CPU | its CPU per publish | all nodes' CPU per publish "
          "| ceiling (the busiest node's core) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['redis']} | {r['shards']} | {r['follow']} | {r['subscribers']} | "
              f"{r['published_per_s']:,} | "
              f"{r['redis_cpu_share']:.0%} | {r['redis_cpu_us_per_publish']} µs | "
              f"{r['all_nodes_cpu_us_per_publish']} µs | {r['ceiling_per_s']:,}/s |")
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "redis_ceiling.json").write_text(
        json.dumps({"measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "args": vars(args), "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
