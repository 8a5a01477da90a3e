"""``POST/GET /api/spark/rollup``: run the rollup job, read its latest result (admins)."""
from flask import current_app, jsonify

from .. import extensions, spark_jobs
from ..auth.guards import identify
from . import bp


def _admin():
    who = identify()
    if not who.admin:
        return who, (jsonify(error="only admins may run or read Spark jobs"), 403)
    return who, None


@bp.post("/api/spark/rollup")
def run_rollup():
    """Start a rollup now; 202 with the correlation id its notifications will carry."""
    who, refusal = _admin()
    if refusal:
        return refusal
    if who.kind == "session":
        extensions.csrf.protect()
    runs = current_app.extensions.setdefault("herald.spark_runs", spark_jobs.Runs())
    correlation_id = spark_jobs.launch_rollup(current_app.config, runs, who.name)
    return jsonify(correlation_id=correlation_id), 202


@bp.get("/api/spark/rollup")
def latest_rollup():
    """The latest rollup's summary, or 404 when none has run yet."""
    _, refusal = _admin()
    if refusal:
        return refusal
    summary = spark_jobs.latest_summary(current_app.config)
    if summary is None:
        return jsonify(error="no rollup has run yet"), 404
    return jsonify(summary)
