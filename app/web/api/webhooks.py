"""``/api/webhooks``: the endpoints Herald POSTs notifications to (admins; session or Bearer token).

    GET    /api/webhooks               -> {"webhooks": [...]}      each with its state
    POST   /api/webhooks               -> 201 the new one, with its "secret" (shown this once)
                                          400 naming the field (a refused URL: "url: …")
    GET    /api/webhooks/<id>          -> the one, with its state   404 when there is none
    PATCH  /api/webhooks/<id>          -> the changed one (url, topics, min_severity, private)
    DELETE /api/webhooks/<id>          -> 204
    GET    /api/webhooks/<id>/failed   -> {"failed": [...]}         parked deliveries, oldest first
    POST   /api/webhooks/<id>/retry    -> {"requeued": N}           parked ones delivered again
    POST   /api/webhooks/<id>/rotate   -> {"id", "secret", "previous_until"}   {"secret"?, "overlap"?}:
                                          a new secret (shown this once); the old one signs
                                          too for "overlap" seconds (default 86400)

A 400 is ``{"error": "<field>: <rule>", "field": "<field>"}``.

An endpoint's state: ``pending`` (queued, the one being tried included),
``parked``, ``retrying`` (failed attempts of the one at the head),
``next_attempt_at``, ``oldest_pending_seconds``, ``delivered``, ``failures``,
``last_success_at``, ``last_error``, ``last_error_at``,
``secret_rotated_until`` (while the previous secret signs too), ``overflowed``
(parked unqueued: the queue was full), ``dropped`` (parked ones dropped past
WEBHOOK_PARKED_MAX; times in UNIX seconds).
"""
import time

from flask import jsonify, request

from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp
from app.webhooks import rotation, store

PUBLIC = ("id", "url", "topics", "min_severity", "private", "created", "created_by")

admins_only = access.admins("only admins manage webhooks")


def _public(record, client):
    rotated_until = record.get("previous_until")
    if rotated_until is not None and rotated_until <= time.time():
        rotated_until = None
    return {**{k: record.get(k) for k in PUBLIC}, **store.state(client, record["id"]),
            "secret_rotated_until": rotated_until}


def _not_found():
    return jsonify(error="no such webhook"), 404


def _refused(exc):
    message = str(exc)
    return jsonify(error=message, field=message.split(":", 1)[0]), 400


@bp.get("/api/webhooks")
@admins_only
def list_webhooks(who):
    client = extensions.redis()
    return jsonify(webhooks=[_public(r, client) for r in store.list_all(client)])


@bp.post("/api/webhooks")
@admins_only
def create_webhook(who):
    client = extensions.redis()
    try:
        record = store.create(client, request.get_json(silent=True), who.name)
    except store.WebhookError as exc:
        return _refused(exc)
    return jsonify({**_public(record, client), "secret": record["secret"]}), 201


@bp.get("/api/webhooks/<endpoint_id>")
@admins_only
def get_webhook(who, endpoint_id):
    client = extensions.redis()
    record = store.get(client, endpoint_id)
    return jsonify(_public(record, client)) if record else _not_found()


@bp.patch("/api/webhooks/<endpoint_id>")
@admins_only
def update_webhook(who, endpoint_id):
    client = extensions.redis()
    try:
        record = store.update(client, endpoint_id, request.get_json(silent=True))
    except store.WebhookError as exc:
        return _refused(exc)
    return jsonify(_public(record, client)) if record else _not_found()


@bp.delete("/api/webhooks/<endpoint_id>")
@admins_only
def delete_webhook(who, endpoint_id):
    return ("", 204) if store.delete(extensions.redis(), endpoint_id) else _not_found()


@bp.get("/api/webhooks/<endpoint_id>/failed")
@admins_only
def failed_deliveries(who, endpoint_id):
    client = extensions.redis()
    if store.get(client, endpoint_id) is None:
        return _not_found()
    return jsonify(failed=store.parked(client, endpoint_id))


@bp.post("/api/webhooks/<endpoint_id>/retry")
@admins_only
def retry_parked(who, endpoint_id):
    moved = store.requeue_parked(extensions.redis(), endpoint_id)
    return _not_found() if moved is None else jsonify(requeued=moved)


@bp.post("/api/webhooks/<endpoint_id>/rotate")
@admins_only
def rotate_secret(who, endpoint_id):
    data = request.get_json(silent=True)
    data = {} if data is None else data
    try:
        if not isinstance(data, dict):
            raise store.WebhookError("body: must be a JSON object")
        unknown = sorted(set(data) - {"secret", "overlap"})
        if unknown:
            raise store.WebhookError(f"{unknown[0]}: is not a known field (secret, overlap)")
        rotated = rotation.rotate(extensions.redis(), endpoint_id, data.get("secret"),
                                  data.get("overlap"))
    except store.WebhookError as exc:
        return _refused(exc)
    return jsonify(rotated) if rotated else _not_found()
