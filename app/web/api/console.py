"""``/api/presence`` (who is online) and ``/api/ops/status`` (the operations console's data).

    GET /api/presence     -> {"online": [{"user", "since", "connections"}], "count": N}
                             any caller: a user's token or session, an admin, an API key
    GET /api/ops/status   -> everything the console shows (app/ops/console.py); admins only

Times are UNIX seconds, except ``since`` (milliseconds, like notification ids).
"""
from flask import current_app, jsonify

from app.ops import console, metrics
from app.realtime import presence
from app.redis_client import UNAVAILABLE
from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp
from app.web.auth.guards import identify


@bp.get("/api/presence")
def who_is_online():
    identify()  # 401 for nobody
    try:
        online = presence.online(extensions.redis())
    except UNAVAILABLE:
        return jsonify(error="Redis is unreachable; try again"), 503
    return jsonify(online=online, count=len(online))


@bp.get("/api/ops/status")
@access.admins("only admins see the operations console")
def ops_status(who):
    try:
        metrics.save_snapshot(current_app)  # this process's own figures, fresh
        picture = console.status(extensions.redis(), current_app.config.get("READY_REQUIRES") or ())
    except UNAVAILABLE:
        return jsonify(error="Redis is unreachable; try again"), 503
    return jsonify(picture)
