"""Herald under abuse: an event flood and a connection flood, and what others notice.

For each attack, on one web process (``python wsgi.py``) and its Redis:

- a normal client (python-socketio) subscribed to ``bench`` gets one
  notification every 100 ms, published over REST: its publish-to-delivery
  latency is measured before, during and after the attack;
- ``/healthz`` is asked every 100 ms: its answer time, and its status;
- the web process's resident memory before, at the attack's peak, and 5 s after.

Attacks:

- **events**: 20 connections of one signed-in user each send 20,000 ``read``
  events as fast as the socket takes them;
- **connections**: 5,000 TCP connections that send nothing (bounded: the
  admission limit is set to 2,000, as a process near its descriptor limit).

    .venv/bin/python bench/abuse.py [--attack events|connections|both]
"""
import argparse
import socket
import threading
import time

import requests  # noqa: E402
import websocket  # noqa: E402
from common import save, summary  # first: it puts the project on sys.path

from app.users import accounts, subscriptions  # noqa: E402
from tests.support import Listener, LiveServer, RedisServer, flood_reads, rss_mb  # noqa: E402


class Observer(threading.Thread):
    """Publishes every 100 ms and asks /healthz; records latencies by phase."""

    def __init__(self, server, key, listener):
        super().__init__(daemon=True)
        self.server, self.key, self.listener = server, key, listener
        self.phase = "before"
        self.delivery, self.health, self.health_status = {}, {}, {}
        self.running = True

    def run(self):
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {self.key}"
        count = 0
        while self.running:
            phase = self.phase
            started = time.time()
            try:
                reply = session.post(self.server.url + "/api/notifications", timeout=30,
                                     json={"topic": "bench.tick", "title": f"t{count}"})
                sent = reply.json()["id"]
                deadline = time.time() + 30
                while sent not in self.listener.ids() and time.time() < deadline:
                    time.sleep(0.002)
                self.delivery.setdefault(phase, []).append((time.time() - started) * 1000)
            except (requests.RequestException, ValueError, KeyError):
                self.delivery.setdefault(phase, []).append(30_000.0)
            began = time.time()
            try:
                status = requests.get(self.server.url + "/healthz", timeout=30).status_code
            except requests.RequestException:
                status = 0
            self.health.setdefault(phase, []).append((time.time() - began) * 1000)
            self.health_status.setdefault(phase, []).append(status)
            count += 1
            time.sleep(0.1)


def event_flood(server, token, connections=20, events=20_000):
    def one():
        try:
            flood_reads(server, token, events).shutdown()
        except (OSError, websocket.WebSocketException):
            pass  # refused or cut off at once
    threads = [threading.Thread(target=one) for _ in range(connections)]
    for thread in threads:
        thread.start()
    return threads


def connection_flood(server, count=5_000):
    held = []
    for _ in range(count):
        try:
            held.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        except OSError:
            break
    return held


def measure(attack):
    import tempfile
    from pathlib import Path
    folder = Path(tempfile.mkdtemp(prefix="herald-bench-"))
    redis_server = RedisServer(folder)
    redis_server.start()
    client = redis_server.client()
    accounts.create_user(client, "ann", "ann-password")
    accounts.create_user(client, "eve", "eve-password")
    subscriptions.add(client, "ann", ["bench"], limit=10)
    key = accounts.create_api_key(client, "bench")
    server = LiveServer(redis_server.url, folder, MAX_CONNECTIONS="2000", REQUEST_TIMEOUT="10",
                        MAX_CONNECTIONS_PER_ADDRESS="0", MAX_SESSIONS_PER_ADDRESS="0",
                        RATELIMIT_API_KEY="100000 per second")
    server.start()
    listener = Listener(server, server.token("ann", "ann-password"))
    observer = Observer(server, key, listener)
    memory = {}
    try:
        observer.start()
        time.sleep(3)
        memory["before"] = rss_mb(server.process.pid)
        observer.phase = "during"
        if attack == "events":
            threads = event_flood(server, server.token("eve", "eve-password"))
            peak = memory["before"]
            for thread in threads:
                while thread.is_alive():
                    peak = max(peak, rss_mb(server.process.pid))
                    thread.join(0.2)
            held = []
        else:
            held = connection_flood(server)
            peak = rss_mb(server.process.pid)
            time.sleep(5)
            peak = max(peak, rss_mb(server.process.pid))
        time.sleep(2)
        memory["peak"] = peak
        for sock in held:
            sock.close()
        observer.phase = "after"
        time.sleep(5)
        memory["after"] = rss_mb(server.process.pid)
    finally:
        observer.running = False
        observer.join(60)
        listener.close()
        server.stop()
        client.close()
        redis_server.stop()
    return {"attack": attack, "memory_mb": memory,
            "delivery_ms": {p: summary(v) for p, v in observer.delivery.items() if v},
            "healthz_ms": {p: summary(v) for p, v in observer.health.items() if v},
            "healthz_not_200": {p: sum(1 for s in v if s != 200)
                                for p, v in observer.health_status.items()}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attack", choices=["events", "connections", "both"], default="both")
    args = parser.parse_args()
    attacks = ["events", "connections"] if args.attack == "both" else [args.attack]
    results = []
    for attack in attacks:
        result = measure(attack)
        results.append(result)
        print(f"{attack} flood:")
        for phase in ("before", "during", "after"):
            d, h = result["delivery_ms"].get(phase), result["healthz_ms"].get(phase)
            if d and h:
                print(f"  {phase:6}  delivery median {d['median']:.0f} ms, max {d['max']:.0f} ms;"
                      f"  /healthz median {h['median']:.0f} ms, max {h['max']:.0f} ms,"
                      f" not 200: {result['healthz_not_200'].get(phase, 0)}")
        m = result["memory_mb"]
        print(f"  memory: before {m['before']:.0f} MB, peak {m['peak']:.0f} MB, "
              f"after {m['after']:.0f} MB")
    print(f"written to {save('abuse', {'results': results})}")


if __name__ == "__main__":
    main()
