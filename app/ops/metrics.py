"""Herald's figures for Prometheus: one ``/metrics`` for the whole deployment.

Each process keeps its own numbers where they arise, at no cost per
delivery beyond an integer addition:

- every web process writes a snapshot of its figures (clients, deliveries,
  batches, relay lag, admission, event streams...) to
  ``herald:metrics:web:<host>:<pid>`` every few seconds, with an expiry
  (app/ops/web_figures.py);
- the workers count into the hash ``herald:metrics:workers`` (ZeroMQ bridge
  messages received and refused, digest emails sent and failed, Spark job
  outcomes, webhook deliveries); the webhook queue gauges are read from the
  queues themselves (app/webhooks/figures.py, which registers its own collector:
  each package adds its figures with register());
- figures of one worker instance among several (each bridge's backlog,
  every worker's heartbeat) are one sample per instance: app/ops/worker_health.py.

``/metrics``, answered by any web process, renders all of it in the Prometheus
text format (prometheus-client), the web figures labelled with ``process``.
"""
import logging

import orjson
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)

from app.ops import heartbeats, worker_health
from app.ops.histogram import BATCH_BUCKETS, LAG_BUCKETS
from app.ops.web_figures import WEB_PREFIX, process_label, save_snapshot, web_snapshot
from app.redis_client import UNAVAILABLE
from app.stream.keys import METRICS_WORKERS

log = logging.getLogger(__name__)

# Worker figures: hash field -> (kind, help).
WORKER_METRICS = {
    "bridge_received": ("counter", "Messages the ZeroMQ bridge accepted."),
    "bridge_refused": ("counter", "Messages the ZeroMQ bridge refused (bad input or backlog full)."),
    "digest_emails_sent": ("counter", "Digest and critical emails sent."),
    "digest_send_failures": ("counter", "SMTP attempts that failed (retried with backoff)."),
    "spark_jobs_succeeded": ("counter", "Spark jobs that ended well."),
    "spark_jobs_failed": ("counter", "Spark jobs that failed."),
}


def count(client, field, amount=1):
    """A worker adds to one of its counters (never raises: figures must not break work)."""
    try:
        client.hincrby(METRICS_WORKERS, field, amount)
    except UNAVAILABLE:
        pass


def gauge(client, field, value):
    """A worker sets one of its gauges (never raises)."""
    try:
        client.hset(METRICS_WORKERS, field, value)
    except UNAVAILABLE:
        pass


def _histogram(family, process, bounds, state):
    cumulative, buckets = 0, []
    for bound, count_ in zip([*map(str, bounds), "+Inf"], state["counts"], strict=True):
        cumulative += count_
        buckets.append((bound, cumulative))
    family.add_metric([process], buckets, state["sum"])


class HeraldCollector:
    """Reads every process's figures from Redis when Prometheus scrapes."""

    def __init__(self, services):
        self.services = services

    def collect(self):
        client = self.services.redis
        try:
            save_snapshot(self.services)  # this process's figures, fresh
            keys = sorted(client.scan_iter(WEB_PREFIX + "*", count=500))
            snapshots = client.mget(keys) if keys else []
            workers = client.hgetall(METRICS_WORKERS)
            faults = worker_health.faults(client)
            beats = heartbeats.read(client)
        except UNAVAILABLE as exc:
            log.warning("metrics: Redis unreachable (%s); only this process's figures", exc)
            keys = [(WEB_PREFIX + process_label()).encode()]
            snapshots = [orjson.dumps(web_snapshot(self.services))]
            workers, faults, beats = {}, {}, []
        families = {
            "connected_clients": GaugeMetricFamily(
                "herald_connected_clients", "Socket.IO connections open now.", labels=["process"]),
            "deliveries": CounterMetricFamily(
                "herald_deliveries", "Notifications sent to clients (one per client).", labels=["process"]),
            "notifications_relayed": CounterMetricFamily(
                "herald_notifications_relayed", "Notifications the relay took from Redis.",
                labels=["process"]),
            "redis_reconnects": CounterMetricFamily(
                "herald_redis_reconnects", "Times the relay lost Redis and reconnected.",
                labels=["process"]),
            "relay_connected": GaugeMetricFamily(
                "herald_relay_connected", "1 while the relay follows the live channel.", labels=["process"]),
            "slow_client_disconnects": CounterMetricFamily(
                "herald_slow_client_disconnects", "Clients disconnected for not reading.",
                labels=["process"]),
            "abusive_disconnects": CounterMetricFamily(
                "herald_abusive_disconnects",
                "Clients disconnected for sending more messages than their budget.",
                labels=["process"]),
            "join_timeouts": CounterMetricFamily(
                "herald_join_timeouts", "Connections closed for not joining the namespace in time.",
                labels=["process"]),
            "connections_refused": CounterMetricFamily(
                "herald_connections_refused",
                "Connections refused at the connection limits (in total, per address).",
                labels=["process"]),
            "handshakes_waited": CounterMetricFamily(
                "herald_handshakes_waited",
                "Connections that waited for a handshake slot (MAX_HANDSHAKES opened at once).",
                labels=["process"]),
            "handshakes_expired": CounterMetricFamily(
                "herald_handshakes_expired",
                "Handshake slots let go after HANDSHAKE_WAIT rather than by a connect answered.",
                labels=["process"]),
            "connections_silent": CounterMetricFamily("herald_connections_silent", "Connections "
                "closed for sending nothing within REQUEST_TIMEOUT.", labels=["process"]),
            "connections_evicted": CounterMetricFamily("herald_connections_evicted", "Connections "
                "without a request head let go at the limit for another's.", labels=["process"]),
            "connects_deferred": CounterMetricFamily(
                "herald_connects_deferred",
                "Connects refused as busy (\"retry later\"): past ADMIT_RATE, or REPLAY_QUEUE full.",
                labels=["process"]),
            "connects_deferred_replays": CounterMetricFamily(
                "herald_connects_deferred_replays",
                "Of those, the ones refused because REPLAY_QUEUE replays already waited.",
                labels=["process"]),
            "sessions_refused_per_address": CounterMetricFamily(
                "herald_sessions_refused_per_address",
                "Socket.IO sessions and event streams refused past MAX_SESSIONS_PER_ADDRESS.",
                labels=["process"]),
            "replays_running": GaugeMetricFamily(
                "herald_replays_running", "Replays running now (at most REPLAY_CONCURRENCY).",
                labels=["process"]),
            "replays_waiting": GaugeMetricFamily(
                "herald_replays_waiting", "Connections waiting for their replay's turn.",
                labels=["process"]),
            "sse_streams": GaugeMetricFamily(
                "herald_sse_streams", "Server-Sent Events streams open now.", labels=["process"]),
            "sse_deliveries": CounterMetricFamily(
                "herald_sse_deliveries", "Notifications delivered to event streams (one per stream).",
                labels=["process"]),
            "sse_direct": CounterMetricFamily(
                "herald_sse_direct_deliveries",
                "Of those, written by the fan-out loop itself to an idle stream (no greenlet woken).",
                labels=["process"]),
            "sse_shed": CounterMetricFamily(
                "herald_sse_slow_streams_ended", "Event streams ended for falling behind.",
                labels=["process"]),
        }
        batch = HistogramMetricFamily("herald_fanout_batch_size",
                                      "Notifications fanned out together.", labels=["process"])
        lag = HistogramMetricFamily("herald_relay_lag_seconds",
                                    "From publish (the id's time) to the relay's fan-out.",
                                    labels=["process"])
        for key, raw in zip(keys, snapshots, strict=True):
            if raw is None:
                continue
            process = (key.decode() if isinstance(key, bytes) else key)[len(WEB_PREFIX):]
            snapshot = orjson.loads(raw)
            for name, family in families.items():
                family.add_metric([process], snapshot.get(name, 0))  # older processes lack some
            _histogram(batch, process, BATCH_BUCKETS, snapshot["batch_size"])
            _histogram(lag, process, LAG_BUCKETS, snapshot["relay_lag"])
        yield from families.values()
        yield batch
        yield lag
        fault_family = GaugeMetricFamily("herald_worker_fault",
                                         "1 while a worker reports a fault (see /readyz).",
                                         labels=["worker"])
        for worker in sorted(faults):
            fault_family.add_metric([worker], 1)
        yield fault_family
        yield from worker_health.heartbeat_families(beats)
        for field, (kind, text) in WORKER_METRICS.items():
            value = float(workers.get(field.encode(), 0))
            family = (GaugeMetricFamily if kind == "gauge" else CounterMetricFamily)(
                f"herald_{field}", text)
            family.add_metric([], value)
            yield family
        try:
            yield worker_health.bridge_backlog_family(client)
        except UNAVAILABLE:
            pass


def register(services, collector):
    """Add ``collector`` (a Prometheus collector: ``collect()`` yields metric families)
    to the ``/metrics`` of the process of ``services``: each package registers its own
    figures (app/services.py registers Herald's HeraldCollector)."""
    services.metrics.registry.register(collector)
