"""Publish-to-browser latency: REST publish -> Redis -> relay -> Socket.IO -> DOM,
beside its floor, a minimal relay, in the same run.

Signs one headless Chromium in to the dashboard subscribed to ``bench``,
then publishes N notifications (default 1,000: p99s over at least 1,000
samples) over ``POST /api/notifications``, one every ``--gap`` ms so that
each is measured on an idle system. The clock starts just before the HTTP
request is sent and stops when a MutationObserver sees the item inserted
into the feed. Both clocks are this machine's wall clock.

Then the floor, on the same Redis with the same harness, count and gap:
bench/peers/minimal_relay.py (gevent pywsgi + gevent-websocket, nothing
else): ``POST /publish`` stores and publishes in one Redis round trip, one
greenlet sends each message as one websocket frame, and a page of a few
lines of script puts it in ``<ul id="feed">``. ``floor_ratio`` is Herald's
median over the floor's (the goal of issue 39: at most 1.5).

Per hop: ``arrived_ms`` (publish -> the page's WebSocket) and ``drawn_ms`` (-> the
feed); and ``page_cpu_ms``, the CPU all of Chromium's processes spent per
notification while they came (renderer, GPU process, network service, browser:
``page_cpu_ms_by_process``). On this 2-core machine the page's work competes with the
server and Redis for the same cores, so a page that costs more CPU per notification
also delays the next one's trip.

    .venv/bin/python bench/browser_latency.py [--count 1000] [--gap 50]
"""
import argparse
import time

import requests
from common import (  # first: sys.path
    browser_cpu_ms,
    browser_cpu_since,
    browser_page,
    minimal_relay,
    plain_page,
    save,
    stack,
    summary,
)

from tests.support import wait_until  # noqa: E402


def measure(count, gap_ms):
    with stack() as (redis_server, _client, server, key):
        with browser_page(server) as page:
            herald = publish_and_watch(page, server.url + "/api/notifications", key, count, gap_ms)
        with minimal_relay(redis_server.url) as (relay_url, _process), plain_page(relay_url) as page:
            floor = publish_and_watch(page, relay_url + "/publish", None, count, gap_ms)
    return {"count": count, "gap_ms": gap_ms, **herald, "floor": floor,
            "floor_ratio": round(herald["latency_ms"]["median"] / floor["latency_ms"]["median"], 2)}


def publish_and_watch(page, url, key, count, gap_ms):
    """Publish ``count`` notifications to ``url`` one every ``gap_ms``; each one's
    latency to ``page``'s feed, and the publish call's own time."""
    http = requests.Session()
    if key:
        http.headers["Authorization"] = f"Bearer {key}"
    sent, api_ms = {}, []
    cpu_before = browser_cpu_ms()
    for i in range(count):
        started = time.time() * 1000
        reply = http.post(url, timeout=5, json={"topic": "bench.latency", "title": f"n{i}"})
        api_ms.append(time.time() * 1000 - started)
        reply.raise_for_status()
        sent[reply.json()["id"]] = started
        time.sleep(gap_ms / 1000)
    seen = wait_until(lambda: _all_seen(page, sent), timeout=30, message="all in the feed")
    page_cpu = browser_cpu_since(cpu_before, count)
    arrived = page.evaluate("window.arrivedAt")
    answered = [started + ms for started, ms in zip(sent.values(), api_ms, strict=True)]
    return {"latency_ms": summary([seen[i] - started for i, started in sent.items()]),
            "rest_publish_ms": summary(api_ms),
            # the relay's and the page's share: shown this long after the publish was answered
            "after_answer_ms": summary([seen[i] - at for i, at in zip(sent, answered, strict=True)]),
            # per hop: on the page's socket this long after the publish started (the
            # server's and the wire's share), then drawn this long after it arrived (the page's)
            "arrived_ms": summary([arrived[i] - started for i, started in sent.items()]),
            "drawn_ms": summary([seen[i] - arrived[i] for i in sent]),
            # what the page's work costs the browser, all its processes, per notification
            "page_cpu_ms": page_cpu["total"], "page_cpu_ms_by_process": page_cpu}


def _all_seen(page, sent):
    seen = page.evaluate("window.seenAt")
    return seen if all(i in seen for i in sent) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--gap", type=float, default=50, help="ms between publishes")
    args = parser.parse_args()
    result = measure(args.count, args.gap)
    print(f"publish-to-browser latency over {args.count} notifications to one browser:")
    for name, figures in (("Herald", result), ("minimal relay (floor)", result["floor"])):
        lat, api = figures["latency_ms"], figures["rest_publish_ms"]
        print(f"  {name}: median {lat['median']:.1f} ms   p99 {lat['p99']:.1f} ms   "
              f"max {lat['max']:.1f} ms   (the publish call alone: median {api['median']:.1f} ms, "
              f"max {api['max']:.1f} ms; shown {figures['after_answer_ms']['median']:+.1f} ms "
              "after its answer, median)")
        print(f"    per hop (median): on the page's socket {figures['arrived_ms']['median']:.1f} ms "
              f"after the publish started, drawn {figures['drawn_ms']['median']:.1f} ms after that")
        by_process = ", ".join(f"{kind} {ms:.1f}" for kind, ms in figures["page_cpu_ms_by_process"].items()
                               if kind != "total")
        print(f"    the browser's CPU per notification: {figures['page_cpu_ms']:.1f} ms ({by_process})")
    print(f"  Herald / floor (median): {result['floor_ratio']:.2f}")
    print(f"written to {save('browser_latency', result)}")


if __name__ == "__main__":
    main()
