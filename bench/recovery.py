"""How long recovery takes, as a person at the browser sees it.

- web restart: the web process is killed; 100 notifications are published
  while it is down; it is started again. Measured: from starting the new
  process to the last missed notification appearing in the browser's feed
  (process start-up + the browser's reconnect backoff + replay).
- Redis restart: redis-server is killed and started again (same data);
  notifications are published as soon as it accepts them. Measured: from
  starting redis-server to the first of them appearing in the feed (the
  relay's reconnect backoff + catch-up).

    .venv/bin/python bench/recovery.py [--runs 3]
"""
import argparse
import statistics
import time

from common import browser_page, save, stack  # first: it puts the project on sys.path

from app.stream.publish import Bus, BusUnavailable  # noqa: E402
from tests.support import wait_until  # noqa: E402


def seen_at(page, entry_id, timeout=30):
    return wait_until(lambda: page.evaluate(f"window.seenAt['{entry_id}']"), timeout=timeout,
                      message=f"{entry_id} in the feed")


def web_restart(server, bus, page):
    warm = bus.publish("bench.warm", "before")
    seen_at(page, warm)
    server.kill()
    missed = [bus.publish("bench.missed", f"m{i}") for i in range(100)]
    started = time.time() * 1000
    server.start()
    healthy = time.time() * 1000
    shown = seen_at(page, missed[-1])
    return {"to_healthy_ms": healthy - started, "to_last_missed_shown_ms": shown - started}


def redis_restart(redis_server, client, page):
    bus = Bus(client)
    warm = bus.publish("bench.warm", "before")
    seen_at(page, warm)
    redis_server.kill()
    time.sleep(1.0)
    started = time.time() * 1000
    redis_server.start()
    while True:
        try:
            first = bus.publish("bench.after", "first after restart")
            break
        except BusUnavailable:
            time.sleep(0.01)
    shown = seen_at(page, first)
    return {"to_first_shown_ms": shown - started}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    result = {"web_restart": [], "redis_restart": []}
    with stack() as (redis_server, client, server, _key), browser_page(server) as page:
        bus = Bus(client)
        for _ in range(args.runs):
            result["web_restart"].append(web_restart(server, bus, page))
            page.wait_for_selector("#connection[data-state=connected]")
        for _ in range(args.runs):
            result["redis_restart"].append(redis_restart(redis_server, client, page))
    web = [r["to_last_missed_shown_ms"] for r in result["web_restart"]]
    healthy = [r["to_healthy_ms"] for r in result["web_restart"]]
    red = [r["to_first_shown_ms"] for r in result["redis_restart"]]
    print(f"web restart -> last of 100 missed notifications shown: median {statistics.median(web):.0f} ms"
          f" (runs: {', '.join(f'{v:.0f}' for v in web)}; process healthy after median"
          f" {statistics.median(healthy):.0f} ms)")
    print(f"Redis restart -> first new notification shown: median {statistics.median(red):.0f} ms"
          f" (runs: {', '.join(f'{v:.0f}' for v in red)})")
    print(f"written to {save('recovery', result)}")


if __name__ == "__main__":
    main()
