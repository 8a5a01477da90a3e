"""Faults of the worker processes, where every web process sees them (/readyz, /metrics).

A worker that cannot do its work for a reason an operator must fix (the
archive's disk is full or read-only, ``SMTP_URL`` is malformed) reports it
here, and reports again when it works once more; the hash
``herald:workers:faults`` holds ``worker -> {"detail", "since"}``. Reporting
never raises: a fault report must not become a second fault.
"""
import time

import orjson

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
