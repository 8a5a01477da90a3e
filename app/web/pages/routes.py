"""The dashboard, and ``/vendor/*``: the npm-installed libraries, served from node_modules.

A signed-in page needs Redis (who is signed in, their subscriptions). While
this process knows Redis to be unreachable (its RedisWatch) a page is the
outage page at once (503, app/web/api/errors.py), rather than a wait on
Redis's timeouts; a page that meets the outage itself gets the same page
through the app-wide handler there, logged as a warning, never a 500. Pages
read Redis through a client of their own whose timeouts are short
(``page_redis``, app/services.py): a person waits seconds at most, not the 5 s
the background loops allow.
"""
import logging

from flask import abort, current_app, redirect, render_template, request, send_from_directory, url_for
from flask_wtf.csrf import generate_csrf

from app.settings import ROOT
from app.users import subscriptions
from app.web.api.errors import outage_page, redis_down
from app.web.auth import tokens
from app.web.auth.guards import session_user
from app.web.extensions import herald
from app.web.pages.blueprint import bp

log = logging.getLogger(__name__)

# Only these files of node_modules are served, by a short public name.
VENDOR = {
    "jquery.js": "jquery/dist/jquery.min.js",
    "underscore.js": "underscore/underscore-umd-min.js",
    "backbone.js": "backbone/backbone-min.js",
}


def _page_redis():
    return herald().page_redis


def _page_config(user):
    """What a page's scripts need: who, a token for the socket and REST, the CSRF token."""
    return {
        "user": user["name"],
        "admin": user["admin"],
        "token": tokens.issue(current_app.config["SECRET_KEY"], user["name"], user["token_key"]),
        "tokenTtl": current_app.config["TOKEN_TTL"],
        "csrfToken": generate_csrf(),
        "subscriptions": subscriptions.list_topics(_page_redis(), user["name"]),
    }


def _page(template, admin_only=False, **context):
    """Render a signed-in page (the sign-in form for nobody; 403 for a non-admin
    on an admin page), with ``context`` for its template; the outage page at once
    while Redis is known to be unreachable."""
    if redis_down():
        log.warning("%s %s: Redis is unreachable; answered the outage page (503)", request.method,
                    request.path)
        return outage_page()
    user = session_user(_page_redis())
    if user is None:
        return redirect(url_for("auth.login"))
    if admin_only and not user["admin"]:
        abort(403)
    return render_template(template, user=user, page=_page_config(user), **context)


@bp.route("/")
def dashboard():
    """Every user: the feed, its filters and the detail of one notification."""
    return _page("dashboard.html")


@bp.route("/preferences")
def preferences():
    """Every user: which topics also reach them by email, and when."""
    return _page("preferences.html")


@bp.route("/jobs")
def jobs():
    """Admins: live progress of Spark jobs and the latest rollup."""
    return _page("jobs.html", admin_only=True)


@bp.route("/digests")
def digests():
    """Admins: their email digest subscriptions."""
    return _page("digests.html", admin_only=True)


@bp.route("/webhooks")
def webhooks():
    """Admins: the endpoints notifications are POSTed to, and how their deliveries go."""
    return _page("webhooks.html", admin_only=True)


@bp.route("/ops")
def ops():
    """Admins: the operations console (workers, web processes, queues, who is online)."""
    return _page("ops.html", admin_only=True)


@bp.route("/vendor/<name>")
def vendor(name):
    path = VENDOR.get(name)
    if path is None:
        abort(404)
    return send_from_directory(ROOT / "node_modules", path, max_age=3600)
