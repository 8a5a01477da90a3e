"""What a bridge tells ``/metrics``, once a second: its own backlog (a gauge per
instance, app/ops/worker_health.py) and what it received and refused since its
last report (added to the deployment's counters in ``herald:metrics:workers``).
Skipped while Redis is away; the counts then go in the next report.
"""
import time
from collections import Counter

from app.ops import worker_health
from app.redis_client import UNAVAILABLE
from app.stream.keys import METRICS_WORKERS

REPORT_SECONDS = 1.0


class Reporter:
    def __init__(self, client, instance):
        self.client = client
        self.instance = instance
        self.reported = Counter()  # what has already been added to Redis
        self.due_at = 0.0

    def due(self):
        return time.monotonic() >= self.due_at

    def report(self, counters, backlog):
        """Report ``backlog`` and the received/refused totals in ``counters``; never raises."""
        self.due_at = time.monotonic() + REPORT_SECONDS
        refused = sum(n for name, n in counters.items()
                      if name.startswith("bad_") or name == "refused_backlog_full")
        now = {"bridge_received": counters["received"], "bridge_refused": refused}
        try:
            with self.client.pipeline(transaction=False) as pipe:
                worker_health.bridge_backlog(pipe, self.instance, backlog)
                for field, value in now.items():
                    if value > self.reported[field]:
                        pipe.hincrby(METRICS_WORKERS, field, value - self.reported[field])
                pipe.execute()
            self.reported.update({k: v - self.reported[k] for k, v in now.items()})
        except UNAVAILABLE:
            pass  # the next write to Redis notices and backs off
