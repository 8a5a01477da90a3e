"""A lean Socket.IO load generator: N websocket clients on /notifications, one process.

It speaks Engine.IO v4 / Socket.IO v5 itself over `websockets` (no
python-socketio client per connection, which would cost a thread each):
open, connect to /notifications with ``auth={"token": …}``, subscribe to a
topic (acknowledged), then answer pings and count every notification. A
notification's latency is now minus ``data.t`` (the publisher's wall clock,
ms; same machine, same clock).

    python bench/loadgen.py --url http://127.0.0.1:5000 --token T --clients 1000 \\
        --topic bench --seconds 10 > result.json

Prints ``ready`` on stderr once every client is subscribed, then measures for
``--seconds`` (or until SIGTERM) and writes one JSON object on stdout:
clients connected, deliveries, deliveries/s, latency percentiles (ms), and
the fewest deliveries any client got. ``--idle`` only connects and holds the
connections until SIGTERM (for memory per connection).
"""
import argparse
import asyncio
import json
import signal
import sys
import time

import websockets

NAMESPACE = "/notifications"


class Stats:
    def __init__(self):
        self.latencies = []
        self.per_client = []
        self.started = None
        self.stopped = None

    def summary(self, connected):
        lat = sorted(self.latencies)

        def pct(p):
            return lat[min(len(lat) - 1, int(p * (len(lat) - 1)))] if lat else None
        seconds = (self.stopped or time.time()) - (self.started or time.time())
        return {"clients": connected, "deliveries": len(lat),
                "deliveries_per_s": len(lat) / seconds if seconds > 0 else 0,
                "seconds": seconds, "p50_ms": pct(0.5), "p99_ms": pct(0.99),
                "max_ms": lat[-1] if lat else None,
                "fewest_per_client": min(self.per_client) if self.per_client else 0}


async def client(url, token, topic, stats, index, ready, measuring, done):
    """One connection: handshake, subscribe, then receive until ``done``."""
    counted = 0
    async with websockets.connect(url, max_size=None, compression=None,
                                  ping_interval=None, open_timeout=30) as ws:
        opening = await ws.recv()
        if not opening.startswith("0"):
            raise RuntimeError(f"client {index}: expected an Engine.IO open packet, got {opening[:80]}")
        await ws.send(f"40{NAMESPACE}," + json.dumps({"token": token}))
        while not (await ws.recv()).startswith(f"40{NAMESPACE}"):
            pass
        await ws.send(f'42{NAMESPACE},1["subscribe",' + json.dumps({"topics": [topic]}) + "]")
        while not (await ws.recv()).startswith(f"43{NAMESPACE},1"):
            pass
        ready.append(index)
        prefix_one, prefix_many = f'42{NAMESPACE},["notification",', f'42{NAMESPACE},["notifications",'
        receive = asyncio.ensure_future(ws.recv())
        finished = asyncio.ensure_future(done.wait())
        while True:
            await asyncio.wait({receive, finished}, return_when=asyncio.FIRST_COMPLETED)
            if finished.done():
                receive.cancel()
                break
            message = receive.result()
            receive = asyncio.ensure_future(ws.recv())
            if message == "2":
                await ws.send("3")
                continue
            if not measuring.is_set():
                continue
            now = time.time() * 1000
            if message.startswith(prefix_one):
                envelopes = [json.loads(message[len(prefix_one):-1])]
            elif message.startswith(prefix_many):
                envelopes = json.loads(message[len(prefix_many):-1])
            else:
                continue
            for envelope in envelopes:
                stats.latencies.append(now - envelope["data"]["t"])
            counted += len(envelopes)
    stats.per_client.append(counted)


async def main_async(args):
    url = args.url.replace("http", "ws", 1) + "/socket.io/?EIO=4&transport=websocket"
    stats, ready = Stats(), []
    measuring, done = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, done.set)
    loop.add_signal_handler(signal.SIGINT, done.set)
    gate = asyncio.Semaphore(100)  # connect at most 100 at a time

    async def gated(i):
        async with gate:
            task = asyncio.ensure_future(client(url, args.token, args.topic, stats, i, ready,
                                                measuring, done))
            deadline = time.time() + 30
            while i not in ready and not task.done() and time.time() < deadline:
                await asyncio.sleep(0.005)
        return await task

    tasks = [asyncio.ensure_future(gated(i)) for i in range(args.clients)]
    deadline = time.time() + 120
    while len(ready) < args.clients and time.time() < deadline:
        await asyncio.sleep(0.05)
    print(f"ready {len(ready)}", file=sys.stderr, flush=True)
    stats.started = time.time()
    measuring.set()
    if not args.idle:
        try:
            await asyncio.wait_for(done.wait(), timeout=args.seconds)
        except TimeoutError:
            pass
    else:
        await done.wait()
    stats.stopped = time.time()
    done.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(stats.summary(len(ready))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", default="")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--topic", default="bench")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--idle", action="store_true")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
