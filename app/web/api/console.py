"""``/api/presence`` (who is online) and ``/api/ops/status`` (the operations console's data).

    GET /api/presence     -> {"online": [{"user", "since", "connections"}], "count": N}
                             admins: everyone online; other users: themselves and those
                             who share a topic with them (a topic-limited token: with its
                             topics); API keys: refused
    GET /api/ops/status   -> everything the console shows (app/ops/console.py); admins only

Times are UNIX seconds, except ``since`` (milliseconds, like notification ids).
"""
from flask import current_app, jsonify

from app.ops import console, web_figures
from app.realtime import presence
from app.redis_client import UNAVAILABLE
from app.users import subscriptions
from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp


@bp.get("/api/presence")
@access.users()
def who_is_online(who):
    client = extensions.redis()
    try:
        online = presence.online(client)
        if not who.admin:
            topics = who.topics if who.topics is not None else \
                subscriptions.list_topics(client, who.name)
            online = presence.shared_with(client, online, who.name, topics)
    except UNAVAILABLE:
        return jsonify(error="Redis is unreachable; try again"), 503
    return jsonify(online=online, count=len(online))


@bp.get("/api/ops/status")
@access.admins("only admins see the operations console")
def ops_status(who):
    try:
        web_figures.save_snapshot(extensions.herald())  # this process's own figures, fresh
        picture = console.status(extensions.redis(), current_app.config.get("READY_REQUIRES") or ())
    except UNAVAILABLE:
        return jsonify(error="Redis is unreachable; try again"), 503
    return jsonify(picture)
