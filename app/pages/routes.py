"""The dashboard, and ``/vendor/*``: the npm-installed libraries, served from node_modules."""
from flask import abort, current_app, redirect, render_template, send_from_directory, url_for
from flask_wtf.csrf import generate_csrf

from .. import extensions, subscriptions
from ..auth import tokens
from ..auth.guards import session_user
from ..config import ROOT
from . import bp

# Only these files of node_modules are served, by a short public name.
VENDOR = {
    "jquery.js": "jquery/dist/jquery.min.js",
    "underscore.js": "underscore/underscore-umd-min.js",
    "backbone.js": "backbone/backbone-min.js",
}


def _page_config(user):
    """What a page's scripts need: who, a token for the socket and REST, the CSRF token."""
    return {
        "user": user["name"],
        "admin": user["admin"],
        "token": tokens.issue(current_app.config["SECRET_KEY"], user["name"], user["token_key"]),
        "tokenTtl": current_app.config["TOKEN_TTL"],
        "csrfToken": generate_csrf(),
        "subscriptions": subscriptions.list_topics(extensions.redis(), user["name"]),
    }


@bp.route("/")
def dashboard():
    user = session_user()
    if user is None:
        return redirect(url_for("auth.login"))
    return render_template("dashboard.html", user=user, page=_page_config(user))


def _admin_page(template):
    user = session_user()
    if user is None:
        return redirect(url_for("auth.login"))
    if not user["admin"]:
        abort(403)
    return render_template(template, user=user, page=_page_config(user))


@bp.route("/preferences")
def preferences():
    """Every user: which topics also reach them by email, and when."""
    user = session_user()
    if user is None:
        return redirect(url_for("auth.login"))
    return render_template("preferences.html", user=user, page=_page_config(user))


@bp.route("/jobs")
def jobs():
    """Admins: live progress of Spark jobs and the latest rollup."""
    return _admin_page("jobs.html")


@bp.route("/digests")
def digests():
    """Admins: their email digest subscriptions."""
    return _admin_page("digests.html")


@bp.route("/vendor/<name>")
def vendor(name):
    path = VENDOR.get(name)
    if path is None:
        abort(404)
    return send_from_directory(ROOT / "node_modules", path, max_age=3600)
