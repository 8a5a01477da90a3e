"""``POST/GET /api/spark/rollup``: run the rollup job, read its latest result (admins)."""
from flask import current_app, jsonify

from app.spark import launcher
from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp

admins_only = access.admins("only admins may run or read Spark jobs")


@bp.post("/api/spark/rollup")
@admins_only
def run_rollup(who):
    """Start a rollup now; 202 with the correlation id its notifications will carry,
    409 (with the running one's) while one runs."""
    try:
        correlation_id = launcher.launch_rollup(current_app.config, extensions.herald().spark_runs,
                                                  who.name,
                                                  extensions.redis())
    except launcher.RollupRunning as exc:
        return jsonify(error=str(exc), correlation_id=exc.correlation_id), 409
    return jsonify(correlation_id=correlation_id), 202


@bp.get("/api/spark/rollup/running")
@admins_only
def running_rollup(who):
    """``{"correlation_id": ID or null, "has_summary": bool}``: the rollup running now,
    if any, and whether one has finished (GET /api/spark/rollup has a summary to give).

    The Jobs page asks this before the summary: before the first rollup, "none yet" is
    an ordinary answer here, where the summary's 404 is a failed request in the
    browser's log."""
    return jsonify(correlation_id=launcher.running_rollup(extensions.redis()),
                   has_summary=launcher.latest_summary(current_app.config) is not None)


@bp.get("/api/spark/rollup")
@admins_only
def latest_rollup(who):
    """The latest rollup's summary, or 404 when none has run yet (see running_rollup)."""
    summary = launcher.latest_summary(current_app.config)
    if summary is None:
        return jsonify(error="no rollup has run yet"), 404
    return jsonify(summary)
