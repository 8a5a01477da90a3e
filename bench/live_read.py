"""What reading one notification off herald:live costs the relay: redis-py's
``PubSub.get_message(timeout=…)`` (Herald's follower until app/stream/live_reader.py)
against Herald's LiveReader, CPU per notification that arrives alone.

Each reader runs in a process of its own, under gevent as the web process does,
subscribed to one channel of a fresh redis-server; this process publishes
``--rate`` notifications a second (each alone, as a quiet relay sees them) until
the reader has read ``--count``. The reader's CPU (user + system, its wakes
included) from its first notification to its last, per notification. Rounds
alternate the two readers, so the machine's noise falls on both.

    .venv/bin/python bench/live_read.py [--count 200] [--rate 20] [--rounds 3]
"""
import sys

if __name__ == "__main__" and "--reader" in sys.argv:  # a reader's process: gevent first
    from gevent import monkey
    monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.redis_client import connect  # noqa: E402
from app.stream.live_reader import LiveReader  # noqa: E402

CHANNEL = "bench:live"
READERS = ("redis-py", "herald")


def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def read(url, reader, count):
    """A reader's process: subscribe, say so, read ``count`` notifications, print the
    CPU per notification (µs) as JSON."""
    pubsub = connect(url, socket_timeout=None).pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(CHANNEL)
    if reader == "herald":
        live = LiveReader(pubsub)
        take = lambda: live.messages(100)  # noqa: E731
    else:  # the follower's loop before LiveReader: a wait, then what else has arrived
        def take():
            message = pubsub.get_message(timeout=1.0)
            taken = []
            while message is not None:
                taken.append(message)
                message = pubsub.get_message(timeout=0)
            return taken
    connect(url).set("bench:ready", reader)
    got, started = 0, None
    while got < count:
        taken = take()
        if taken and started is None:
            started, taken = cpu(), taken[1:]  # from the first one's arrival
        got += len(taken)
    print(json.dumps({"reader": reader, "us_per_notification": (cpu() - started) / count * 1e6}))


def round_of(url, reader, count, rate):
    """One reader's figure (µs per notification)."""
    publisher = connect(url)
    publisher.delete("bench:ready")
    child = subprocess.Popen([sys.executable, __file__, "--reader", reader, "--url", url,
                              "--count", str(count)], stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while publisher.get("bench:ready") is None:  # bounded: the reader subscribes at once
            if time.monotonic() > deadline or child.poll() is not None:
                raise SystemExit(f"the {reader} reader did not start")
            time.sleep(0.05)
        deadline = time.monotonic() + (count + 1) / rate * 3 + 10
        number = 0
        while child.poll() is None and time.monotonic() < deadline:
            number += 1
            publisher.publish(CHANNEL, json.dumps({"id": f"{number}-0", "topic": "bench", "data": "x" * 60}))
            time.sleep(1 / rate)
        output, _ = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        publisher.close()
    return json.loads(output)["us_per_notification"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reader", choices=READERS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reader:
        return read(args.url, args.reader, args.count)

    from common import save

    from tests.support import RedisServer
    with tempfile.TemporaryDirectory() as folder:
        redis_server = RedisServer(folder, durable=False)
        redis_server.start()
        try:
            figures = {reader: [] for reader in READERS}
            for _ in range(args.rounds):
                for reader in READERS:
                    figures[reader].append(round_of(redis_server.url, reader, args.count, args.rate))
        finally:
            redis_server.stop()
    result = {reader: {"us_per_notification": values, "median": statistics.median(values)}
              for reader, values in figures.items()}
    result["herald_over_redis_py"] = result["herald"]["median"] / result["redis-py"]["median"]
    for reader in READERS:
        print(f"{reader:9s} {', '.join(f'{v:.0f}' for v in figures[reader])} µs of CPU per notification")
    print(f"Herald's reader / redis-py's: {result['herald_over_redis_py']:.2f}x")
    save("live_read", result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
