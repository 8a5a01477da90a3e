"""``/api/digests``: an admin's email digest subscriptions (session or Bearer token).

    GET    /api/digests               -> {"digests": [...]}     (the caller's own)
    POST   /api/digests               -> 201 the new one        400 naming the field
    GET    /api/digests/<id>          -> the one                 404 when not the caller's
    PATCH  /api/digests/<id>          -> the changed one
    DELETE /api/digests/<id>          -> 204
    GET    /api/digests/<id>/preview  -> {"subject", "text", "html", "total", "window"}
"""


from flask import current_app, jsonify, request

from .. import extensions
from ..digests import render, store
from . import access, bp

FIELDS = ("id", "email", "topics", "min_severity", "schedule", "timezone", "enabled",
          "critical_now", "created")


admins_only = access.admins("only admins have email digests")


def _public(record):
    return {k: record[k] for k in FIELDS}


def _not_found():
    return jsonify(error="no such digest subscription"), 404


@bp.get("/api/digests")
@admins_only
def list_digests(who):
    return jsonify(digests=[_public(r) for r in store.list_all(extensions.redis(), who.name)])


@bp.post("/api/digests")
@admins_only
def create_digest(who):
    try:
        record = store.create(extensions.redis(), who.name, request.get_json(silent=True))
    except store.DigestLimit as exc:
        return jsonify(error=str(exc)), 409
    except store.DigestError as exc:
        return jsonify(error=str(exc)), 400
    return jsonify(_public(record)), 201


@bp.get("/api/digests/<digest_id>")
@admins_only
def get_digest(who, digest_id):
    record = store.get(extensions.redis(), digest_id, who.name)
    return jsonify(_public(record)) if record else _not_found()


@bp.patch("/api/digests/<digest_id>")
@admins_only
def update_digest(who, digest_id):
    try:
        record = store.update(extensions.redis(), digest_id, who.name, request.get_json(silent=True))
    except store.DigestError as exc:
        return jsonify(error=str(exc)), 400
    return jsonify(_public(record)) if record else _not_found()


@bp.delete("/api/digests/<digest_id>")
@admins_only
def delete_digest(who, digest_id):
    return ("", 204) if store.delete(extensions.redis(), digest_id, who.name) else _not_found()


@bp.get("/api/digests/<digest_id>/preview")
@admins_only
def preview_digest(who, digest_id):
    record = store.get(extensions.redis(), digest_id, who.name)
    if record is None:
        return _not_found()
    message, window, total = render.preview(extensions.redis(), record, dashboard_url())
    if message is None:
        return jsonify(subject=None, text=None, html=None, total=0, window=window)
    text, html = render.parts(message)
    return jsonify(subject=message["Subject"], text=text, html=html, total=total, window=window)


def dashboard_url():
    return current_app.config["HERALD_URL"] or request.host_url
