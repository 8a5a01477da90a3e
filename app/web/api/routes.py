"""``POST /api/notifications`` (and its batch), read state, and ``GET /healthz``."""
import logging
import os
import re

from flask import jsonify, request
from werkzeug.exceptions import HTTPException

from app.redis_client import UNAVAILABLE
from app.stream.envelope import EnvelopeError
from app.stream.publish import CredentialRefused, IdempotencyConflict
from app.users import read_state
from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp
from app.web.auth import api_keys, scope

log = logging.getLogger("herald.api")


@bp.post("/api/notifications")
@access.publishers()
def publish(who):
    """Publish one notification: an API key, or an admin (session with CSRF, or token)."""
    def one(envelope, key):
        published = extensions.bus().publish_envelope(envelope, key, api_keys.credential(who))
        replayed = published.pop("replayed", False)
        if not replayed:  # the notification's own correlation id (a run's, a request's), if any
            log.info("published %s on %s by %s", published["id"], envelope["topic"], who.name,
                     extra={"correlation_id": envelope.get("correlation_id")})
        return published, replayed
    return _publishing(who, one)


@bp.post("/api/notifications/batch")
@access.publishers()
def publish_batch(who):
    """Publish ``{"notifications": [envelope, ...]}`` (1 to 100), all or none, in order."""
    def many(body, key):
        if not isinstance(body, dict) or set(body) != {"notifications"}:
            raise EnvelopeError("notifications", 'the body must be {"notifications": [envelope, ...]}')
        published, replayed = extensions.bus().publish_envelopes(body["notifications"], key,
                                                                 api_keys.credential(who))
        if not replayed:
            ids = published["notifications"]
            log.info("published %d notifications (%s to %s) by %s", len(ids), ids[0]["id"],
                     ids[-1]["id"], who.name)
        return published, replayed
    return _publishing(who, many)


def _publishing(who, publish):
    """Answer a publish request: ``publish(body, idempotency key)`` returns
    ``(answer, replayed)``; refusals become 400 (naming the field) or 422. A
    remembered API key (app/web/auth/api_keys.py) is checked by the publish
    itself, or before any refusal is answered: a revoked key gets 401, always."""
    if not request.is_json:
        access.verify(who)
        return jsonify(error="body: must be a JSON object with Content-Type: application/json"), 400
    try:
        body = request.get_json(silent=True)
    except HTTPException:  # a refused body (app/web/json_body.py), or one too large
        access.verify(who)
        raise
    if body is None:
        access.verify(who)
        return jsonify(error="body: is not valid JSON"), 400
    try:
        published, replayed = publish(body, _idempotency_key(who))
    except EnvelopeError as exc:
        access.verify(who)
        return jsonify(error=str(exc), field=exc.field), 400
    except IdempotencyConflict:
        return jsonify(error="Idempotency-Key: already used for a different notification",
                       field="Idempotency-Key"), 422
    except CredentialRefused:  # revoked since this process last looked it up: nothing written
        access.refuse(who)
    return jsonify(published), 201, {"Idempotent-Replayed": "true"} if replayed else {}


IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")


def _idempotency_key(who):
    """The caller's ``Idempotency-Key`` header, scoped to the caller, or None.

    A publisher that got no answer (a 503, a timeout) sends the same request
    with the same key again: it is stored once, and the answer is the first
    one's. Keys live a day.
    """
    raw = request.headers.get("Idempotency-Key")
    if raw is None:
        return None
    if not IDEMPOTENCY_KEY.fullmatch(raw):
        raise EnvelopeError("Idempotency-Key", "must be 1 to 255 visible ASCII characters")
    scope = "apikey" if who.kind == "apikey" else "user"
    return f"{scope}:{who.name}:{raw}"


@bp.get("/api/read-state")
@access.users()
def get_read_state(who):
    """``{"upto": ID or null, "ids": [...]}``: what the caller has read (a
    topic-limited token: its ids narrowed to the notifications it may see)."""
    client = extensions.redis()
    state = read_state.get(client, who.name)
    for field in ("ids", "unread"):
        state[field] = scope.visible(client, who.name, who.topics, state[field])
    return jsonify(state)


@bp.post("/api/read-state")
@access.users()
def mark_read(who):
    """Mark read: ``{"ids": [...]}`` and/or ``{"upto": ID}``; every tab is told.
    A topic-limited token marks ids it may see only, and never ``upto``."""
    body = request.get_json(silent=True)
    scope.check_read(extensions.redis(), who.name, who.topics, body)
    try:
        change = read_state.mark(extensions.redis(), who.name, body)
    except read_state.ReadStateError as exc:
        return jsonify(error=str(exc)), 400
    return jsonify(change)


@bp.get("/healthz")
def healthz():
    """200 when Redis answers a PING, else 503; ``process`` tells which web process answered."""
    try:
        extensions.redis().ping()
    except UNAVAILABLE as exc:
        return jsonify(status="unavailable", redis=str(exc), process=os.getpid()), 503
    return jsonify(status="ok", process=os.getpid())
