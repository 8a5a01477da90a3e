"""Sign in and out (session, CSRF-protected form) and token issue."""
from flask import current_app, flash, jsonify, redirect, render_template, request, session, url_for
from flask_babel import gettext as _

from app.redis_client import UNAVAILABLE
from app.users import accounts
from app.web import extensions
from app.web.auth import tokens
from app.web.auth.blueprint import bp
from app.web.auth.guards import session_user


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
            flash(_("Herald cannot reach its database right now; try again shortly."))
            return render_template("login.html", username=name), 503
        if user:
            session.clear()  # a fresh session on sign-in: no fixation
            session.permanent = True  # expires after SESSION_LIFETIME
            session["user"] = user["name"]
            session["key"] = user["token_key"]  # sign-out or revoke-tokens ends it
            return redirect(url_for("pages.dashboard"))
        flash(_("Wrong user name or password."))
        return render_template("login.html", username=name), 401
    return render_template("login.html", username="")


@bp.route("/logout", methods=["POST"])
def logout():
    """Sign out: every session and token of the user ends, here and elsewhere (a copy
    of this session's cookie included), and their open connections are closed."""
    user = session_user()
    session.clear()
    if user is not None:
        try:
            accounts.revoke_tokens(extensions.redis(), user["name"])
        except UNAVAILABLE:
            flash(_("Signed out here; Herald could not reach its database to end your other "
                    "sessions, so sign out again shortly."))
    return redirect(url_for("auth.login"))


@bp.errorhandler(UNAVAILABLE[0])
@bp.errorhandler(UNAVAILABLE[1])
@bp.errorhandler(UNAVAILABLE[2])
def unavailable(exc):
    """Redis away while signing in, out, or issuing a token: 503, never a 500."""
    message = "Herald cannot reach its database right now; try again shortly."
    if request.path.startswith("/auth/"):  # JSON for programs: English
        return jsonify(error=message), 503, {"Retry-After": "1"}
    flash(_("Herald cannot reach its database right now; try again shortly."))
    return render_template("login.html", username=""), 503


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
