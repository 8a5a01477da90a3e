"""ZeroMQ bridge ingest rates, beside raw pyzmq PUSH/PULL, in one run.

- raw: PUSH in this process -> PULL in another process that only counts
  (no parsing, no Redis): the ceiling of the transport on this machine;
- fire-and-forget: PUSH -> bridge -> Redis stream, from the first send to
  the stream holding all of them;
- confirmed, one at a time: a REQ peer waiting for each answer (round-trip
  bound);
- confirmed, pipelined: a DEALER keeping ``--window`` requests in flight.

Each uses the same ~200-byte notification.

    .venv/bin/python bench/bridge.py [--count 50000]
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zmq  # noqa: E402
from common import save  # first: it puts the project on sys.path

from app.stream.keys import STREAM  # noqa: E402
from tests.support import Bridge, RedisServer, free_port, wait_until  # noqa: E402

ENVELOPE = {"topic": "bench.bridge", "title": "A notification of typical size",
            "body": "Rolled out build 1234 to 4 hosts.", "severity": "info",
            "data": {"build": 1234, "hosts": 4}}
PAYLOAD = json.dumps(ENVELOPE, separators=(",", ":")).encode()
TOPIC = b"bench.bridge"

RAW_RECEIVER = """
import sys, time, zmq
count = int(sys.argv[2])
pull = zmq.Context().socket(zmq.PULL)
pull.rcvhwm = 10000
pull.bind(sys.argv[1])
print("ready", flush=True)
pull.recv_multipart()
started = time.perf_counter()
for _ in range(count - 1):
    pull.recv_multipart()
print(time.perf_counter() - started, flush=True)
"""


def raw_rate(count):
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    receiver = subprocess.Popen([sys.executable, "-c", RAW_RECEIVER, endpoint, str(count)],
                                stdout=subprocess.PIPE, text=True)
    assert receiver.stdout.readline().strip() == "ready"
    push = zmq.Context.instance().socket(zmq.PUSH)
    push.connect(endpoint)
    for _ in range(count):
        push.send_multipart([TOPIC, PAYLOAD])
    elapsed = float(receiver.stdout.readline())
    receiver.wait(30)
    push.close()
    return count / elapsed


def fire_and_forget_rate(bridge, client, count):
    client.delete(STREAM)
    push = zmq.Context.instance().socket(zmq.PUSH)
    push.connect(bridge.pull)
    started = time.perf_counter()
    for _ in range(count):
        push.send_multipart([TOPIC, PAYLOAD])
    wait_until(lambda: client.xlen(STREAM) >= count, timeout=300, interval=0.005,
               message="all in the stream")
    elapsed = time.perf_counter() - started
    push.close()
    return count / elapsed


def confirmed_sequential_rate(bridge, count):
    req = zmq.Context.instance().socket(zmq.REQ)
    req.connect(bridge.router)
    started = time.perf_counter()
    for _ in range(count):
        req.send(PAYLOAD)
        assert json.loads(req.recv())["ok"]
    elapsed = time.perf_counter() - started
    req.close()
    return count / elapsed


def confirmed_pipelined_rate(bridge, count, window):
    dealer = zmq.Context.instance().socket(zmq.DEALER)
    dealer.connect(bridge.router)
    sent = answered = 0
    started = time.perf_counter()
    while answered < count:
        while sent < count and sent - answered < window:
            dealer.send_multipart([b"", PAYLOAD])
            sent += 1
        assert json.loads(dealer.recv_multipart()[-1])["ok"]
        answered += 1
    elapsed = time.perf_counter() - started
    dealer.close()
    return count / elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=50_000)
    parser.add_argument("--window", type=int, default=256)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="herald-bench-bridge-"))
    redis_server = RedisServer(folder)
    redis_server.start()
    bridge = Bridge(redis_server.url, folder)
    bridge.start()
    client = redis_server.client()
    try:
        result = {
            "count": args.count,
            "raw_push_pull_per_s": raw_rate(args.count),
            "fire_and_forget_per_s": fire_and_forget_rate(bridge, client, args.count),
            "confirmed_sequential_per_s": confirmed_sequential_rate(bridge, min(args.count, 5000)),
            "confirmed_pipelined_per_s": confirmed_pipelined_rate(bridge, args.count, args.window),
            "window": args.window,
        }
    finally:
        client.close()
        bridge.stop()
        redis_server.stop()
    raw = result["raw_push_pull_per_s"]
    print(f"notifications/s into the stream ({args.count} each, same run):")
    for name, key in [("raw pyzmq PUSH/PULL (no Redis)", "raw_push_pull_per_s"),
                      ("fire-and-forget (PUSH -> bridge -> Redis)", "fire_and_forget_per_s"),
                      ("confirmed, one at a time (REQ)", "confirmed_sequential_per_s"),
                      (f"confirmed, {args.window} in flight (DEALER)", "confirmed_pipelined_per_s")]:
        print(f"  {name:45} {result[key]:10,.0f}   {result[key] / raw:6.1%} of raw")
    print(f"written to {save('bridge', result)}")


if __name__ == "__main__":
    main()
