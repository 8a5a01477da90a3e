"""Worker health, where every web process sees it (/readyz, /metrics, the console).

Faults. A worker that cannot do its work for a reason an operator must fix (the
archive's disk is full or read-only, ``SMTP_URL`` is malformed) reports it
here, and reports again when it works once more; the hash
``herald:workers:faults`` holds ``worker -> {"detail", "since"}``. Reporting
never raises: a fault report must not become a second fault.

Figures of the redundant workers, one sample per instance. Several of a kind
may run on one Redis (docs/deploy.md, "Redundant workers"), so a figure that
belongs to one process cannot be one field of the shared
``herald:metrics:workers`` hash, where each would overwrite the other:

- ``herald_bridge_backlog{instance}``: each ZeroMQ bridge sets
  ``herald:metrics:bridge:<instance>`` with an expiry, so a dead bridge
  drops out (workers/bridge/ingest.py reports it every second);
- ``herald_worker_up{role,instance}`` and
  ``herald_worker_heartbeat_age_seconds{role,instance}``: from every worker's
  heartbeat (app/ops/heartbeats.py).
"""
import time

import orjson
from prometheus_client.core import GaugeMetricFamily

from app.redis_client import UNAVAILABLE

FAULTS = "herald:workers:faults"


def fault(client, worker, detail):
    """``worker`` cannot work: ``detail`` says why and what to do."""
    try:
        client.hset(FAULTS, worker, orjson.dumps({"detail": detail, "since": time.time()}))
    except UNAVAILABLE:
        pass


def ok(client, worker):
    """``worker`` works (again)."""
    try:
        client.hdel(FAULTS, worker)
    except UNAVAILABLE:
        pass


def faults(client):
    """``{worker: {"detail", "since"}}`` of every worker reporting a fault now."""
    return {worker.decode(): orjson.loads(raw) for worker, raw in client.hgetall(FAULTS).items()}


BRIDGE_PREFIX = "herald:{metrics}:bridge:"  # one slot: read together (MGET) on a Redis Cluster
BRIDGE_TTL = 10  # seconds a bridge's backlog figure outlives its last report


def bridge_backlog(client, instance, value):
    """Bridge ``instance`` holds ``value`` messages for Redis (``client`` may be a pipeline)."""
    client.set(BRIDGE_PREFIX + instance, int(value), ex=BRIDGE_TTL)


def bridge_backlog_family(client):
    family = GaugeMetricFamily("herald_bridge_backlog",
                               "Messages a ZeroMQ bridge holds, waiting for Redis.",
                               labels=["instance"])
    keys = sorted(client.scan_iter(BRIDGE_PREFIX + "*", count=500))
    for key, raw in zip(keys, client.mget(keys) if keys else [], strict=True):
        if raw is not None:
            family.add_metric([key.decode()[len(BRIDGE_PREFIX):]], float(raw))
    return family


def heartbeat_families(beats):
    """Every worker's heartbeat (``heartbeats.read``): up or missing, and its age."""
    up = GaugeMetricFamily("herald_worker_up", "1 while a worker's heartbeat is fresh, 0 once missing.",
                           labels=["role", "instance"])
    age = GaugeMetricFamily("herald_worker_heartbeat_age_seconds", "Seconds since a worker's last heartbeat.",
                            labels=["role", "instance"])
    for beat in beats:
        up.add_metric([beat["role"], beat["instance"]], int(beat["alive"]))
        age.add_metric([beat["role"], beat["instance"]], beat["age"])
    yield up
    yield age
