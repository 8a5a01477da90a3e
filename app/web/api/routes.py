"""``POST /api/notifications`` (and its batch), read state, and ``GET /healthz``."""
import logging
import os

from flask import jsonify, request
from werkzeug.exceptions import HTTPException

from app.redis_client import UNAVAILABLE
from app.stream.envelope import EnvelopeError
from app.stream.publish import CredentialRefused, IdempotencyConflict, QuotaExceeded
from app.users import read_state
from app.web import extensions, publish_quota, rate_limits
from app.web.api import access, fast_publish
from app.web.api.blueprint import bp
from app.web.api.errors import fails_fast_while_redis_is_down
from app.web.auth import api_keys, scope

log = logging.getLogger("herald.api")


@bp.post("/api/notifications")
@access.publishers()
def publish(who):
    """Publish one notification: an API key, or an admin (session with CSRF, or token)."""
    def one(envelope, key, quota):
        outcome = request.environ.pop(fast_publish.OUTCOME, None)
        if outcome is not None:  # published, or refused, by fast_publish: answered here
            raise outcome
        published = extensions.bus().publish_envelope(envelope, key, api_keys.credential(who), quota)
        replayed = published.pop("replayed", False)
        if not replayed:  # the notification's own correlation id (a run's, a request's), if any
            _reached(published["id"])
            log.info("published %s on %s by %s", published["id"], envelope["topic"], who.name,
                     extra={"correlation_id": envelope.get("correlation_id")})
        return published, replayed
    return _publishing(who, one)


@bp.post("/api/notifications/batch")
@access.publishers()
def publish_batch(who):
    """Publish ``{"notifications": [envelope, ...]}`` (1 to 100), all or none, in order."""
    def many(body, key, quota):
        if not isinstance(body, dict) or set(body) != {"notifications"}:
            raise EnvelopeError("notifications", 'the body must be {"notifications": [envelope, ...]}')
        published, replayed = extensions.bus().publish_envelopes(body["notifications"], key,
                                                                 api_keys.credential(who), quota)
        if not replayed:
            ids = published["notifications"]
            _reached(ids[-1]["id"])
            log.info("published %d notifications (%s to %s) by %s", len(ids), ids[0]["id"],
                     ids[-1]["id"], who.name)
        return published, replayed
    return _publishing(who, many)


def _publishing(who, publish):
    """Answer a publish request: ``publish(body, idempotency key, quota)`` returns
    ``(answer, replayed)``; refusals become 400 (naming the field) or 422.

    Two checks are made by the publish script itself, in its one round trip: a
    remembered API key (app/web/auth/api_keys.py) and the API key's rate limit
    (app/web/publish_quota.py). A request refused before the script gets both
    first (:func:`_refusing`): a revoked key gets 401, and one past its limit 429,
    whatever its body.
    """
    quota = publish_quota.quota(who)
    if not request.is_json:
        return _refusing(who, quota) or (
            jsonify(error="body: must be a JSON object with Content-Type: application/json"), 400)
    try:
        body = request.get_json(silent=True)
    except HTTPException:  # a refused body (app/web/json_body.py), or one too large
        too_many = _refusing(who, quota)
        if too_many is None:
            raise
        return too_many
    if body is None:
        return _refusing(who, quota) or (jsonify(error="body: is not valid JSON"), 400)
    try:
        published, replayed = publish(body, _idempotency_key(who), quota)
    except EnvelopeError as exc:
        return _refusing(who, quota) or (jsonify(error=str(exc), field=exc.field), 400)
    except IdempotencyConflict:
        return jsonify(error="Idempotency-Key: already used for a different notification",
                       field="Idempotency-Key"), 422
    except CredentialRefused:  # revoked since this process last looked it up: nothing written
        access.refuse(who)
    except QuotaExceeded as exc:
        return _too_many(exc)
    return jsonify(published), 201, {"Idempotent-Replayed": "true"} if replayed else {}


def _reached(last_id):
    """Wait for this process's relay to send ``last_id`` to its own clients
    (Relay.reached): before the log line and the answer, whose time would
    otherwise come before the browsers' copy."""
    extensions.herald().relay.reached(last_id)


def _refusing(who, quota):
    """Before a publish is refused for its request: the key checked now (401 when
    revoked) and the request counted against its limit; the 429 past it, else None."""
    access.verify(who)
    if quota is not None:
        try:
            extensions.bus().spend(quota)
        except QuotaExceeded as exc:
            return _too_many(exc)
    return None


def _too_many(exc):
    limit = publish_quota.exceeded(exc.index)
    return rate_limits.refusal(str(limit), limit)


def _idempotency_key(who):
    """The caller's ``Idempotency-Key`` header, scoped to the caller, or None.

    A publisher that got no answer (a 503, a timeout) sends the same request
    with the same key again: it is stored once, and the answer is the first
    one's. Keys live a day.
    """
    raw = request.headers.get("Idempotency-Key")
    if raw is None:
        return None
    if not fast_publish.IDEMPOTENCY_KEY.fullmatch(raw):
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
@fails_fast_while_redis_is_down
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
