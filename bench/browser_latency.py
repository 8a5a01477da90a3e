"""Publish-to-browser latency: REST publish -> Redis -> relay -> Socket.IO -> DOM.

Starts a real redis-server and ``python wsgi.py``, signs one headless
Chromium in to the dashboard subscribed to ``bench``, then publishes N
notifications (default 100) over ``POST /api/notifications``, one every
``--gap`` ms so that each is measured on an idle system. The clock starts
just before the HTTP request is sent and stops when a MutationObserver sees
the item inserted into the feed. Both clocks are this machine's wall clock.

    .venv/bin/python bench/browser_latency.py [--count 100] [--gap 50]

Prints a summary and writes bench/results/browser_latency.json.
"""
import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import accounts  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, sign_in, subscribe  # noqa: E402
from tests.support import LiveServer, RedisServer, wait_until  # noqa: E402

OBSERVER = """() => {
  window.seenAt = {};
  new MutationObserver(function (mutations) {
    var now = Date.now();
    mutations.forEach(function (m) {
      m.addedNodes.forEach(function (node) {
        if (node.getAttribute) window.seenAt[node.getAttribute('data-id')] = now;
      });
    });
  }).observe(document.getElementById('feed'), {childList: true});
}"""


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def measure(count, gap_ms):
    folder = Path(tempfile.mkdtemp(prefix="herald-bench-"))
    redis_server = RedisServer(folder)
    redis_server.start()
    client = redis_server.client()
    accounts.create_user(client, "bench", "bench-password")
    key = accounts.create_api_key(client, "bench")
    server = LiveServer(redis_server.url, folder)
    server.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            sign_in(page, server, "bench", "bench-password")
            subscribe(page, "bench")
            page.evaluate(OBSERVER)
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
            browser.close()
    finally:
        server.stop()
        redis_server.stop()
        client.close()
    latencies = [seen[i] - started for i, started in sent.items()]
    return {
        "count": count,
        "gap_ms": gap_ms,
        "latency_ms": {"median": statistics.median(latencies), "p90": percentile(latencies, 0.9),
                       "max": max(latencies), "min": min(latencies)},
        "rest_publish_ms": {"median": statistics.median(api_ms), "max": max(api_ms)},
    }


def _all_seen(page, sent):
    seen = page.evaluate("window.seenAt")
    return seen if all(i in seen for i in sent) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--gap", type=float, default=50, help="ms between publishes")
    args = parser.parse_args()
    result = measure(args.count, args.gap)
    result["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out = ROOT / "bench" / "results" / "browser_latency.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    lat, api = result["latency_ms"], result["rest_publish_ms"]
    print(f"publish-to-browser latency over {result['count']} notifications to one browser:")
    print(f"  median {lat['median']:.1f} ms   p90 {lat['p90']:.1f} ms   max {lat['max']:.1f} ms"
          f"   min {lat['min']:.1f} ms")
    print(f"  (of which the REST publish call: median {api['median']:.1f} ms, max {api['max']:.1f} ms)")
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
