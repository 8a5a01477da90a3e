"""Publish-to-browser latency: REST publish -> Redis -> relay -> Socket.IO -> DOM.

Signs one headless Chromium in to the dashboard subscribed to ``bench``,
then publishes N notifications (default 100) over ``POST /api/notifications``,
one every ``--gap`` ms so that each is measured on an idle system. The clock
starts just before the HTTP request is sent and stops when a
MutationObserver sees the item inserted into the feed. Both clocks are this
machine's wall clock.

    .venv/bin/python bench/browser_latency.py [--count 100] [--gap 50]
"""
import argparse
import time

import requests
from common import browser_page, save, stack, summary  # first: it puts the project on sys.path

from tests.support import wait_until  # noqa: E402


def measure(count, gap_ms):
    with stack() as (_redis_server, _client, server, key), browser_page(server) as page:
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {key}"
        sent, api_ms = {}, []
        for i in range(count):
            started = time.time() * 1000
            reply = http.post(server.url + "/api/notifications", timeout=5,
                              json={"topic": "bench.latency", "title": f"n{i}"})
            api_ms.append(time.time() * 1000 - started)
            reply.raise_for_status()
            sent[reply.json()["id"]] = started
            time.sleep(gap_ms / 1000)
        seen = wait_until(lambda: _all_seen(page, sent), timeout=30, message="all in the feed")
    return {"count": count, "gap_ms": gap_ms,
            "latency_ms": summary([seen[i] - started for i, started in sent.items()]),
            "rest_publish_ms": summary(api_ms)}


def _all_seen(page, sent):
    seen = page.evaluate("window.seenAt")
    return seen if all(i in seen for i in sent) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--gap", type=float, default=50, help="ms between publishes")
    args = parser.parse_args()
    result = measure(args.count, args.gap)
    lat, api = result["latency_ms"], result["rest_publish_ms"]
    print(f"publish-to-browser latency over {args.count} notifications to one browser:")
    print(f"  median {lat['median']:.1f} ms   p99 {lat['p99']:.1f} ms   max {lat['max']:.1f} ms")
    print(f"  (the REST publish call alone: median {api['median']:.1f} ms, max {api['max']:.1f} ms)")
    print(f"written to {save('browser_latency', result)}")


if __name__ == "__main__":
    main()
