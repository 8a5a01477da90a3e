"""``POST/GET /api/notifications`` and ``GET /healthz`` (see DESIGN.md, REST contract)."""
from flask import jsonify, request

from .. import extensions, history, subscriptions
from ..auth.guards import identify
from ..notifications import EnvelopeError, check_stream_id
from ..redis_client import UNAVAILABLE
from . import bp

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


@bp.post("/api/notifications")
def publish():
    """Publish one notification: an API key, or an admin (session or token)."""
    who = identify()
    if who.kind != "apikey" and not who.admin:
        return jsonify(error="only admins and API keys may publish"), 403
    if who.kind == "session":
        extensions.csrf.protect()  # a browser session must prove the form is ours
    if not request.is_json:
        return jsonify(error="body: must be a JSON object with Content-Type: application/json"), 400
    envelope = request.get_json(silent=True)
    if envelope is None:
        return jsonify(error="body: is not valid JSON"), 400
    try:
        published = extensions.bus().publish_envelope(envelope)
    except EnvelopeError as exc:
        return jsonify(error=str(exc), field=exc.field), 400
    return jsonify(published), 201


def _limit():
    raw = request.args.get("limit")
    if raw is None:
        return DEFAULT_LIMIT
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise EnvelopeError("limit", f"must be a whole number from 1 to {MAX_LIMIT}")
    return int(raw)


@bp.get("/api/notifications")
def list_notifications():
    """The caller's feed in id order: after ``after`` if given, else the newest ``limit``."""
    who = identify()
    if who.kind == "apikey":
        return jsonify(error="an API key publishes; read with a user's token"), 403
    try:
        limit = _limit()
        after = request.args.get("after")
        if after is not None:
            check_stream_id(after, "after")
    except EnvelopeError as exc:
        return jsonify(error=str(exc), field=exc.field), 400
    client = extensions.redis()
    topics = subscriptions.list_topics(client, who.name)
    if after is None:
        found = history.feed_latest(client, who.name, topics, limit)
    else:
        found = history.feed_after(client, who.name, topics, after, limit)
    return jsonify(notifications=found)


@bp.get("/healthz")
def healthz():
    """200 when Redis answers a PING, else 503."""
    try:
        extensions.redis().ping()
    except UNAVAILABLE as exc:
        return jsonify(status="unavailable", redis=str(exc)), 503
    return jsonify(status="ok")
