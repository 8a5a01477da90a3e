"""The webhook figures in ``/metrics``, read from Redis when Prometheus scrapes.

Counters the dispatcher and the senders keep in ``herald:{webhooks}:figures``
(in the same atomic step as the delivery's outcome: one hash slot, layout.py),
plus what they had counted in ``herald:metrics:workers`` before the keys moved
(so no counter goes back), and gauges computed from the queues themselves, so
they keep telling the truth when the worker is down:

- ``herald_webhook_deliveries_total{outcome="delivered"|"parked"}``
- ``herald_webhook_failures_total``: failed attempts (each retried or parked)
- ``herald_webhook_overflowed_total``, ``herald_webhook_dropped_total``: parked because
  a queue was full, and parked ones dropped past their bound (parking.py)
- ``herald_webhook_queue_depth{endpoint}``: deliveries waiting (the one being tried included)
- ``herald_webhook_retrying{endpoint}``: failed attempts so far of the one at the head
- ``herald_webhook_oldest_pending_seconds{endpoint}``: since the head was published
- ``herald_webhook_parked{endpoint}``: parked deliveries
- ``herald_webhook_worker_heartbeat_seconds``: when the worker last went round its loop
"""
import time

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from app.ops import metrics
from app.redis_client import UNAVAILABLE
from app.stream.keys import METRICS_WORKERS
from app.webhooks import layout, store


class WebhookCollector:
    """The webhook families, for the app's ``/metrics`` (registered by :func:`init_app`)."""

    def __init__(self, client):
        self.client = client  # the app's Redis (not the app: no cycle to keep it alive)

    def collect(self):
        client = self.client
        try:
            yield from list(families(client, client.hgetall(METRICS_WORKERS)))
        except UNAVAILABLE:
            pass  # the web figures say Redis is away; these come back with it


def init_app(services):
    """Add the webhook figures to the ``/metrics`` of a web process's ``services``."""
    metrics.register(services, WebhookCollector(services.redis))


def families(client, workers):
    """The webhook metric families; ``workers`` is the ``herald:metrics:workers`` hash
    (the heartbeat, and the counters from before layout.py's move)."""
    own = client.hgetall(layout.FIGURES)

    def figure(name):
        return float(own.get(name.encode(), 0)) + float(workers.get(name.encode(), 0))

    deliveries = CounterMetricFamily("herald_webhook_deliveries",
                                     "Webhook deliveries by final outcome.", labels=["outcome"])
    deliveries.add_metric(["delivered"], figure("webhook_delivered"))
    deliveries.add_metric(["parked"], figure("webhook_parked"))
    yield deliveries
    overflowed = CounterMetricFamily(
        "herald_webhook_overflowed",
        "Webhook deliveries parked without being queued: the queue was full (WEBHOOK_QUEUE_MAX).")
    overflowed.add_metric([], figure("webhook_overflowed"))
    yield overflowed
    dropped = CounterMetricFamily(
        "herald_webhook_dropped",
        "Parked webhook deliveries dropped, oldest first, past WEBHOOK_PARKED_MAX.")
    dropped.add_metric([], figure("webhook_dropped"))
    yield dropped
    failures = CounterMetricFamily("herald_webhook_failures",
                                   "Webhook attempts that failed (then retried or parked).")
    failures.add_metric([], figure("webhook_failures"))
    yield failures
    heartbeat = GaugeMetricFamily("herald_webhook_worker_heartbeat_seconds",
                                  "UNIX time the webhook worker last went round its loop.")
    heartbeat.add_metric([], figure("webhook_heartbeat"))
    yield heartbeat
    gauges = {
        "pending": GaugeMetricFamily("herald_webhook_queue_depth",
                                     "Webhook deliveries waiting, retries included.",
                                     labels=["endpoint"]),
        "retrying": GaugeMetricFamily("herald_webhook_retrying",
                                      "Failed attempts so far of the delivery at the head.",
                                      labels=["endpoint"]),
        "oldest_pending_seconds": GaugeMetricFamily(
            "herald_webhook_oldest_pending_seconds",
            "Seconds since the oldest waiting delivery was published.", labels=["endpoint"]),
        "parked": GaugeMetricFamily("herald_webhook_parked",
                                    "Webhook deliveries given up on (see GET /api/webhooks/ID/failed).",
                                    labels=["endpoint"]),
    }
    now = time.time()
    for record in store.list_all(client):
        state = store.state(client, record["id"], now)
        for name, family in gauges.items():
            family.add_metric([record["id"]], state[name] or 0)
    yield from gauges.values()
