"""A demo publisher: a varied sample notification every few seconds.

``DEMO=1 make run`` starts it so that a newcomer sees the feed, toasts and
badge move at once. ``DEMO_INTERVAL`` sets the seconds between notifications
(default 3). It publishes through ``app.stream.publish`` like any other worker, and
rides out a Redis outage by logging once and trying again.
"""
import itertools
import logging
import random
import signal
import time

from app.ops import logs
from app.settings import get
from app.stream.publish import BusUnavailable, publish

log = logging.getLogger("herald.demo")

SAMPLES = [
    ("demo.deploy.started", "info", "Deploy of web-{n} started", "Rolling out build {n} to 4 hosts."),
    ("demo.deploy.finished", "success", "Deploy of web-{n} finished", "All 4 hosts healthy."),
    ("demo.build.failed", "error", "Build #{n} failed", "tests/test_api.py::test_publish failed"),
    ("demo.disk.usage", "warning", "Disk 85% full on db-{n}", "Consider cleaning old backups."),
    ("demo.signup", "info", "New sign-up: user{n}", None),
    ("demo.payments.outage", "critical", "Payments provider unreachable", "Retrying every 30 s."),
    ("demo.report.ready", "success", "Weekly report #{n} is ready", "<b>HTML</b> shows as text."),
]


def sample(counter, rng):
    topic, severity, title, body = rng.choice(SAMPLES)
    fields = {"severity": severity, "data": {"n": counter}}
    if body:
        fields["body"] = body.format(n=counter)
    return topic, title.format(n=counter), fields


def main():
    logs.configure()
    interval = get("DEMO_INTERVAL")
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.clear())
    rng = random.Random()
    failing = False
    for counter in itertools.count(1):
        if not running:
            break
        topic, title, fields = sample(counter, rng)
        try:
            publish(topic, title, **fields)
            if failing:
                log.info("Redis is back; publishing again")
            failing = False
        except BusUnavailable as exc:
            if not failing:
                log.warning("cannot publish (%s); will keep trying", exc)
            failing = True
        time.sleep(interval)


if __name__ == "__main__":
    main()
