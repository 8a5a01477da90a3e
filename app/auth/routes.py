"""Sign in and out (session, CSRF-protected form) and token issue."""
from flask import current_app, flash, jsonify, redirect, render_template, request, session, url_for

from .. import accounts, extensions
from ..redis_client import UNAVAILABLE
from . import bp, tokens
from .guards import session_user


def _token_reply(user):
    return jsonify(token=tokens.issue(current_app.config["SECRET_KEY"], user["name"],
                                      user["token_key"]),
                   expires_in=current_app.config["TOKEN_TTL"])


@bp.route("/login", methods=["GET", "POST"])
def login():
    """The sign-in form; on success the session holds the user name."""
    if request.method == "POST":
        name = request.form.get("username", "")
        try:
            user = accounts.authenticate(extensions.redis(), name, request.form.get("password", ""))
        except UNAVAILABLE:
            flash("Herald cannot reach its database right now; try again shortly.")
            return render_template("login.html", username=name), 503
        if user:
            session.clear()  # a fresh session on sign-in: no fixation
            session.permanent = True  # expires after SESSION_LIFETIME
            session["user"] = user["name"]
            return redirect(url_for("pages.dashboard"))
        flash("Wrong user name or password.")
        return render_template("login.html", username=name), 401
    return render_template("login.html", username="")


@bp.route("/logout", methods=["POST"])
def logout():
    session.clear()
    return redirect(url_for("auth.login"))


@bp.route("/auth/token", methods=["POST"])
@extensions.csrf.exempt
def token():
    """``{"username", "password"}`` -> ``{"token", "expires_in"}``; 401 when wrong."""
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        return jsonify(error='body: must be JSON {"username": ..., "password": ...}'), 400
    user = accounts.authenticate(extensions.redis(), body.get("username"), body.get("password"))
    if user is None:
        return jsonify(error="wrong username or password"), 401
    return _token_reply(user)


@bp.route("/auth/session-token")
def session_token():
    """A fresh token for the signed-in browser, so a long-open page can reconnect."""
    user = session_user()
    if user is None:
        return jsonify(error="not signed in"), 401
    return _token_reply(user)
