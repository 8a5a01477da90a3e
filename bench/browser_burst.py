"""A burst into one dashboard: how long the page takes to take in a replay, and
whether it keeps up with a steady stream.

Two measurements on one signed-in headless Chromium dashboard (the feed, the
badge, the announcer, the cursor: everything a real page runs):

- **replay**: the page's socket is closed, ``--replay`` notifications are
  published, and the socket is opened again; the clock runs from the
  reconnect until the newest of them is in the feed, and the main thread's
  long tasks (over 50 ms) meanwhile are summed.
- **steady**: ``--rate`` notifications a second for ``--seconds``; each one's
  delay is from just before it was published to its item entering the feed.

``--throttle N`` slows the page's CPU N times (Chromium's own emulation), as
on a phone.

    .venv/bin/python bench/browser_burst.py [--replay 1000] [--rate 100] [--seconds 10] [--throttle 1]
"""
import argparse
import time

from common import browser_page, save, stack, summary  # first: it puts the project on sys.path

from app.stream.publish import Bus  # noqa: E402
from tests.support import wait_until  # noqa: E402

LONG_TASKS = """() => {
  window.longTaskMs = 0;
  new PerformanceObserver(function (list) {
    list.getEntries().forEach(function (entry) { window.longTaskMs += entry.duration; });
  }).observe({entryTypes: ['longtask']});
}"""


def replay(page, bus, count):
    """Seconds from reconnect until the newest of ``count`` missed notifications is shown."""
    page.evaluate("() => herald.client.socket.disconnect()")
    wait_until(lambda: page.evaluate("() => !herald.client.socket.connected"), message="disconnected")
    ids = [bus.publish("bench.replay", f"missed {i}") for i in range(count)]
    page.evaluate("() => { window.longTaskMs = 0; }")
    started = time.time() * 1000
    page.evaluate("() => herald.client.socket.connect()")
    seen = wait_until(lambda: page.evaluate("(id) => window.seenAt[id]", ids[-1]), timeout=300,
                      message="the newest replayed notification in the feed")
    return {"count": count, "seconds": (seen - started) / 1000,
            "long_tasks_ms": page.evaluate("window.longTaskMs")}


def steady(page, bus, rate, seconds):
    """Publish ``rate`` a second for ``seconds``: each one's delay until it is in the feed."""
    sent, gap, start = {}, 1 / rate, time.time()
    for i in range(int(rate * seconds)):
        time.sleep(max(0.0, start + i * gap - time.time()))
        started = time.time() * 1000
        sent[bus.publish("bench.steady", f"steady {i}")] = started
    last = list(sent)[-1]
    wait_until(lambda: page.evaluate("(id) => window.seenAt[id]", last), timeout=300,
               message="the last steady notification in the feed")
    seen = page.evaluate("window.seenAt")
    return {"rate": rate, "seconds": seconds,
            "delay_ms": summary([seen[i] - at for i, at in sent.items() if i in seen]),
            "shown": sum(1 for i in sent if i in seen), "sent": len(sent)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replay", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--throttle", type=float, default=1)
    args = parser.parse_args()
    with stack() as (_redis_server, client, server, _key), browser_page(server) as page:
        if args.throttle > 1:
            cdp = page.context.new_cdp_session(page)
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": args.throttle})
        page.evaluate(LONG_TASKS)
        bus = Bus(client)
        result = {"throttle": args.throttle,
                  "replay": replay(page, bus, args.replay),
                  "steady": steady(page, bus, args.rate, args.seconds)}
    burst, flow = result["replay"], result["steady"]
    print(f"CPU throttle {args.throttle:g}x")
    print(f"replay of {burst['count']}: newest shown {burst['seconds']:.2f} s after the reconnect, "
          f"long tasks {burst['long_tasks_ms']:.0f} ms")
    delay = flow["delay_ms"]
    print(f"steady {args.rate:g}/s for {args.seconds:g} s: "
          f"delay to the feed median {delay['median']:.0f} ms, "
          f"p99 {delay['p99']:.0f} ms, max {delay['max']:.0f} ms ({flow['shown']}/{flow['sent']} shown)")
    print(f"written to {save('browser_burst', result)}")


if __name__ == "__main__":
    main()
