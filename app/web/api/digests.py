"""``/api/digests``: an admin's email digest subscriptions (session or Bearer token).

    GET    /api/digests               -> {"digests": [...]}     (the caller's own)
    POST   /api/digests               -> 201 the new one        400 naming the field
    GET    /api/digests/<id>          -> the one                 404 when not the caller's
    PATCH  /api/digests/<id>          -> the changed one
    DELETE /api/digests/<id>          -> 204
    GET    /api/digests/<id>/preview  -> {"subject", "text", "html", "total", "window"}
    GET    /api/digests/<id>/preview.html -> the email's HTML part as a document of its own
    GET    /api/digests/describe?schedule=S -> {"words": "At 09:00, Monday through Friday"}
"""


from flask import current_app, jsonify, request

from app.digests import render, store
from app.digests.schedule import ScheduleError, check, describe
from app.web import extensions, i18n
from app.web.api import access
from app.web.api.blueprint import bp

FIELDS = ("id", "email", "topics", "min_severity", "schedule", "timezone", "enabled",
          "critical_now", "created", "quiet")


admins_only = access.admins("only admins have email digests")


def _public(record):
    public = {k: record.get(k) for k in FIELDS}
    # "At 08:00, only on Monday", in the reader's language (the pages' cookie, else
    # Accept-Language; English for a program that asks for neither).
    public["schedule_words"] = describe(record["schedule"], i18n.locale())
    return public


def _body():
    """The request's JSON; preferences alone make managed digests."""
    body = request.get_json(silent=True)
    if isinstance(body, dict) and ("managed" in body or "exclude" in body):
        raise store.DigestError(f"{'managed' if 'managed' in body else 'exclude'}: is set by "
                                "a user's preferences, not here")
    return body


def _not_found():
    return jsonify(error="no such digest subscription"), 404


@bp.get("/api/digests")
@admins_only
def list_digests(who):
    return jsonify(digests=[_public(r) for r in store.list_all(extensions.redis(), who.name)
                            if not r.get("managed")])


@bp.post("/api/digests")
@admins_only
def create_digest(who):
    try:
        record = store.create(extensions.redis(), who.name, _body())
    except store.DigestLimit as exc:
        return jsonify(error=str(exc)), 409
    except store.DigestError as exc:
        return jsonify(error=str(exc), field=exc.field), 400
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
        record = store.update(extensions.redis(), digest_id, who.name, _body())
    except store.DigestError as exc:
        return jsonify(error=str(exc), field=exc.field), 400
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


# The preview document's own policy: the email's inline styles and data: images,
# nothing else (no script, no fetch, no form, no plugin); framed by Herald's
# pages only. ``sandbox`` keeps it script-less and origin-less even when it is
# opened on its own rather than in the page's <iframe sandbox>.
PREVIEW_POLICY = "; ".join([
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
    "sandbox",
])
NOTHING_YET = ("<!doctype html><html><body><p>Nothing has been collected for this digest "
               "yet.</p></body></html>")


@bp.get("/api/digests/<digest_id>/preview.html")
@admins_only
def preview_document(who, digest_id):
    """The preview's HTML part, served as a document of its own so that the email's
    inline styles apply (the pages' policy refuses inline style, and an ``srcdoc``
    frame would inherit it). Same owner rule as /preview; never cached."""
    record = store.get(extensions.redis(), digest_id, who.name)
    if record is None:
        return _not_found()
    message, _window, _total = render.preview(extensions.redis(), record, dashboard_url())
    html = render.parts(message)[1] if message is not None else NOTHING_YET
    return html, 200, {"Content-Type": "text/html; charset=utf-8",
                       "Content-Security-Policy": PREVIEW_POLICY,
                       "X-Frame-Options": "SAMEORIGIN", "Cache-Control": "no-store"}


@bp.get("/api/digests/describe")
@admins_only
def describe_schedule(who):
    """A schedule in words, for the form to show as the admin types: 400 with the
    same message saving it would give when the schedule cannot be used."""
    text = request.args.get("schedule", "")
    if len(text) > 200:
        return jsonify(error="schedule: is over 200 characters", field="schedule"), 400
    try:
        check(text, "UTC")
        return jsonify(words=describe(text, i18n.locale()))
    except ScheduleError as exc:
        return jsonify(error=str(exc), field="schedule"), 400
    except Exception:  # cron-descriptor refusing what cronsim took: no words, not a 500
        return jsonify(error="schedule: cannot be described in words", field="schedule"), 400


def dashboard_url():
    return current_app.config["HERALD_URL"] or request.host_url
