"""Search and filters over 100,000 retained notifications: GET /api/notifications latency.

A private redis-server and ``python wsgi.py`` (bench/common.py's stack, with
HISTORY_MAX raised so nothing is trimmed) are seeded with ``--count``
notifications (varied topics, severities, titles and bodies; 10% private to
the reader, 10% private to others); the reader subscribes to ``*``, has read
half of the history (with a few thousand single ids read and unread beside),
archived 500 and snoozed 100. Then each query is asked ``--requests`` times
over REST (a real HTTP client, the user's bearer token), and its latency from
the client's side is reported: median, p99 and max.

The rare word is in 30 notifications, so a search for it scans the whole
history to fill a page; the common one is in about a quarter of them.

    .venv/bin/python bench/search.py [--count 100000] [--requests 50]
"""
import argparse
import random
import shutil
import statistics
import time

import requests
from common import percentile, save, stack  # first: it puts the project on sys.path

from app.stream.envelope import SEVERITIES  # noqa: E402
from app.stream.keys import STREAM  # noqa: E402
from app.stream.publish import Bus  # noqa: E402
from app.users import archive_and_snooze, read_state  # noqa: E402

RARE, COMMON = "quasar", "deploy"
TOPICS = ("ops.deploy", "ops.backup", "ops.db", "spark.job.done", "spark.job.failed",
          "billing.invoice", "board.card.updated", "news.daily", "ci.run", "hr.review")
WORDS = ("backup", "disk", "quota", "latency", "rollup", "cache", "login", "invoice",
         "card", "moved", "release", "build", "failed", "succeeded", "queue", "worker",
         "timeout", "retry", "certificate", "renewal", "memory", "cpu", "node", "cluster")


def envelopes(count, rng):
    """The seeded history, oldest first."""
    rare_every = max(1, count // 30)
    for index in range(count):
        words = rng.sample(WORDS, 4)
        if rng.random() < 0.25:
            words[rng.randrange(4)] = COMMON
        title = f"{words[0].capitalize()} {words[1]} #{index}"
        envelope = {"topic": rng.choice(TOPICS), "title": title,
                    "severity": rng.choices(SEVERITIES, (60, 15, 15, 8, 2))[0]}
        if rng.random() < 0.6:
            envelope["body"] = (f"The {words[2]} on node-{index % 97} reported {words[3]} "
                                f"after {index % 60} s; see the runbook for what to do next.")
        if index % rare_every == rare_every // 2:
            envelope["body"] = envelope.get("body", "") + f" Seen by {RARE.upper()} too."
        roll = rng.random()
        if roll < 0.10:
            envelope["user"] = "bench"
        elif roll < 0.20:
            envelope["user"] = rng.choice(("ann", "ben", "cid"))
        yield envelope


def seed(client, count, rng):
    bus = Bus(client, history_max=count * 2)
    batch, started = [], time.monotonic()
    for envelope in envelopes(count, rng):
        batch.append(envelope)
        if len(batch) == 100:
            bus.publish_envelopes(batch)
            batch = []
    if batch:
        bus.publish_envelopes(batch)
    ids = [entry_id.decode() for entry_id, _ in client.xrange(STREAM)]
    assert len(ids) == count, (len(ids), count)
    # The reader's own state: half read, single ids read and unread beside; archived, snoozed.
    read_state.apply(client, "bench", [], ids[count // 2], [])
    for _ in range(0, 2000, 500):
        read_state.apply(client, "bench", rng.sample(ids[count // 2:], 500), None,
                         rng.sample(ids[:count // 2], 250))
    archived = rng.sample(ids, 500)
    for start in range(0, 500, 250):
        archive_and_snooze.archive(client, "bench", archived[start:start + 250])
    until = int(time.time() * 1000) + 86_400_000
    for entry_id in rng.sample(ids, 100):
        archive_and_snooze.snooze(client, "bench", entry_id, until)
    return ids, time.monotonic() - started


def timed(session, url, params, count):
    """(latencies in ms, notifications in the last answer) of ``count`` requests; ``params``
    is a dict or a function of the request's number returning one."""
    for number in range(3):  # warm up
        session.get(url, params=params(number) if callable(params) else params, timeout=60)
    latencies, found = [], 0
    for number in range(count):
        query = params(number) if callable(params) else params
        started = time.perf_counter()
        reply = session.get(url, params=query, timeout=60)
        latencies.append((time.perf_counter() - started) * 1000)
        assert reply.status_code == 200, reply.text
        found = len(reply.json()["notifications"])
    return latencies, found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(15)
    result = {"count": args.count, "requests": args.requests, "queries": []}
    with stack(topics=("*",), HISTORY_MAX=str(args.count * 2)) as (redis_server, client, server,
                                                                  _key):
        folder = redis_server.folder  # ~30 MB of Redis data: removed after a run that went well
        ids, seconds = seed(client, args.count, rng)
        result["seed_seconds"] = round(seconds, 1)
        retained = client.xlen(STREAM)
        print(f"seeded {retained:,} notifications in {seconds:.1f} s")
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {server.token('bench', 'bench-password')}"
        url = server.url + "/api/notifications"
        picks = random.Random(16)
        befores = [ids[picks.randrange(len(ids) // 10, len(ids))] for _ in range(args.requests + 3)]
        queries = [
            ("newest page, no filter", {}),
            (f"q={RARE} (30 matches: scans everything)", {"q": RARE}),
            (f"q={COMMON} (about 25% match)", {"q": COMMON}),
            (f"q={RARE}&severity=error,critical", {"q": RARE, "severity": "error,critical"}),
            (f"q={COMMON}&topic=ops&severity=warning,error",
             {"q": COMMON, "topic": "ops", "severity": "warning,error"}),
            ("unread=1", {"unread": "1"}),
            (f"unread=1&q={RARE}", {"unread": "1", "q": RARE}),
            ("topic=billing", {"topic": "billing"}),
            ("view=archived (500 spread over the history)", {"view": "archived"}),
            ("before=<random id> (a page back)", lambda n: {"before": befores[n]}),
            (f"before=<random id>&q={COMMON}", lambda n: {"before": befores[n], "q": COMMON}),
            (f"before=<random id>&q={RARE}", lambda n: {"before": befores[n], "q": RARE}),
        ]
        print(f"\n{'query (limit 100)':<48} {'found':>5} {'median':>9} {'p99':>9} {'max':>9}")
        for name, params in queries:
            latencies, found = timed(session, url, params, args.requests)
            row = {"query": name, "found": found,
                   "median_ms": round(statistics.median(latencies), 1),
                   "p99_ms": round(percentile(latencies, 0.99), 1),
                   "max_ms": round(max(latencies), 1)}
            result["queries"].append(row)
            print(f"{name:<48} {found:>5} {row['median_ms']:>7.1f}ms {row['p99_ms']:>7.1f}ms "
                  f"{row['max_ms']:>7.1f}ms", flush=True)
    shutil.rmtree(folder, ignore_errors=True)
    print(f"\nwritten to {save('search', result)}")


if __name__ == "__main__":
    main()
