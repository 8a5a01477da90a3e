"""Operations endpoints: ``/readyz``, ``/metrics``, and the API's OpenAPI description.

``/healthz`` (liveness: Redis answers) is in app/web/api/routes.py with the REST
contract. ``/readyz`` says whether this process should get traffic: what this
process needs to serve, that is Redis answering and its relay following the
live channel (and the roles an operator listed in ``READY_REQUIRES``). A
worker's fault is shown (``faults``), never a 503: every web process would
answer the same, and one failing archiver would take all of them out of the
load balancer's rotation, for a fault no web process can mend. ``/metrics`` is the
Prometheus text format (app/ops/metrics.py); with METRICS_TOKEN set it asks for
``Authorization: Bearer <METRICS_TOKEN>``.
"""
import hmac
import os
from pathlib import Path

from flask import Blueprint, Response, current_app, jsonify, request
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.ops import heartbeats, worker_health
from app.redis_client import UNAVAILABLE
from app.web import extensions

bp = Blueprint("ops", __name__)
OPENAPI = Path(__file__).resolve().parent.parent / "web" / "api" / "openapi.json"


@bp.get("/readyz")
def readyz():
    """200 when Redis answers, the relay follows ``herald:live`` and every role in
    ``READY_REQUIRES`` has a live heartbeat; else 503 with the reason. Workers'
    faults (the archive's disk, a digest worker's settings) are listed in ``faults``."""
    relay = extensions.herald().relay
    try:
        extensions.redis().ping()
        faults = worker_health.faults(extensions.redis())
        required = current_app.config.get("READY_REQUIRES") or ()
        missing = heartbeats.missing_roles(heartbeats.read(extensions.redis()), required) if required else {}
    except UNAVAILABLE as exc:
        return jsonify(status="unavailable", reason=f"Redis: {exc}", process=os.getpid()), 503
    if relay is None or not relay.running:
        return jsonify(status="unavailable", reason="the relay is not running",
                       process=os.getpid()), 503
    if not relay.follower.connected:
        return jsonify(status="unavailable", reason="the relay is not following herald:live yet",
                       process=os.getpid()), 503
    shown = {"faults": faults} if faults else {}
    if missing:
        reason = "; ".join(missing[role] for role in sorted(missing))
        return jsonify(status="degraded", reason=reason, missing=sorted(missing),
                       process=os.getpid(), **shown), 503
    return jsonify(status="ok", process=os.getpid(), **shown)


@bp.get("/metrics")
def prometheus_metrics():
    token = current_app.config.get("METRICS_TOKEN")
    if token:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return jsonify(error="metrics need 'Authorization: Bearer <METRICS_TOKEN>'"), 401
    return Response(generate_latest(extensions.herald().metrics.registry), mimetype=CONTENT_TYPE_LATEST)


@bp.get("/api/openapi.json")
def openapi():
    """The REST API's OpenAPI 3 description (also what the fuzz tests are generated from)."""
    return current_app.response_class(OPENAPI.read_bytes(), mimetype="application/json")
