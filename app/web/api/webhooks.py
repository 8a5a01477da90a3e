"""``/api/webhooks``: the endpoints Herald POSTs notifications to (admins; session or Bearer token).

    GET    /api/webhooks               -> {"webhooks": [...]}      each with its state
    POST   /api/webhooks               -> 201 the new one, with its "secret" (shown this once)
                                          400 naming the field (a refused URL: "url: …")
    GET    /api/webhooks/<id>          -> the one, with its state   404 when there is none
    PATCH  /api/webhooks/<id>          -> the changed one (url, topics, min_severity, private)
    DELETE /api/webhooks/<id>          -> 204
    GET    /api/webhooks/<id>/failed   -> {"failed": [...]}         parked deliveries, oldest first
    POST   /api/webhooks/<id>/retry    -> {"requeued": N}           parked ones delivered again

An endpoint's state: ``pending`` (queued, the one being tried included),
``parked``, ``retrying`` (failed attempts of the one at the head),
``next_attempt_at``, ``oldest_pending_seconds``, ``delivered``, ``failures``,
``last_success_at``, ``last_error``, ``last_error_at`` (times in UNIX seconds).
"""
from flask import jsonify, request

from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp
from app.webhooks import store

PUBLIC = ("id", "url", "topics", "min_severity", "private", "created", "created_by")

admins_only = access.admins("only admins manage webhooks")


def _public(record, client):
    return {**{k: record.get(k) for k in PUBLIC}, **store.state(client, record["id"])}


def _not_found():
    return jsonify(error="no such webhook"), 404


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
        return jsonify(error=str(exc)), 400
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
        return jsonify(error=str(exc)), 400
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
