"""The Users page (admins) and the invite page its links open.

An admin adds a user by name (an admin or not) in one of two ways: with a
password the admin sets and passes on, or with a one-time invite link
(app/users/invites.py: expiring, single use) with which the invitee sets the
password. The page lists every user, and the invites not yet used, each with
a Withdraw button (its link then answers 410, as a spent one does). Plain HTML
forms, CSRF-protected by Flask-WTF like the sign-in form; no endpoint for
programs (``bin/flask users`` is theirs).

Every form that changes something answers with a redirect to ``GET /users``
(POST/redirect/GET), so reloading the page never sends it again. What the page
then says once (who was added, the new link, what was withdrawn) rides in the
admin's own session to that GET, which takes it out: a new invite link is in
the signed session cookie (HttpOnly, SameSite=Lax) for that one redirect, then
gone. Herald keeps only the link's hash, so it can never be shown again.
"""
from datetime import UTC, datetime

from flask import abort, flash, make_response, redirect, render_template, request, session, url_for
from flask_babel import gettext as _

from app.users import accounts, invites
from app.web.api.errors import outage_page, redis_down
from app.web.auth.guards import session_user
from app.web.pages.blueprint import bp
from app.web.pages.routes import _page, _page_redis

SHOW_ONCE = "users_page_says"  # the session's key: what GET /users shows once


def _iso(seconds):
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z") if seconds else ""


def _listing():
    client = _page_redis()
    return {"users": [dict(u, created_iso=_iso(u["created"])) for u in accounts.list_users(client)],
            "invites": [dict(i, expires_iso=_iso(i["expires"])) for i in invites.listing(client)]}


def _problem(name, password, way):
    """What is wrong with the form, in the reader's language; None when nothing."""
    if not accounts.USERNAME_RE.match(name):
        return _("The name must be 1 to 64 letters, digits, “_”, “.” or “-”.")
    if accounts.get_user(_page_redis(), name) is not None:
        return _("There is a user %(name)s already: choose another name.", name=name)
    if way == "password" and len(password) < accounts.MIN_PASSWORD:
        return _("The password must be at least %(count)d characters.", count=accounts.MIN_PASSWORD)
    return None


def _add(admin):
    """Add the user the form names: what the page says once after it (``added``), or
    what it shows again with the error (``error``, ``form``)."""
    form = request.form
    name, password = form.get("name", "").strip(), form.get("password", "")
    way = "invite" if form.get("way") == "invite" else "password"
    make_admin = form.get("admin") == "1"
    problem = _problem(name, password, way)
    if problem:
        return {"error": problem, "form": {"name": name, "way": way, "admin": make_admin}}
    if way == "password":
        accounts.create_user(_page_redis(), name, password, admin=make_admin)
        return {"added": {"name": name, "admin": make_admin}}
    token = invites.create(_page_redis(), name, admin=make_admin, by=admin["name"])
    invite = invites.pending(_page_redis(), token)
    return {"added": {"name": name, "admin": make_admin,
                      "link": url_for("pages.invite", token=token, _external=True),
                      "expires_iso": _iso(invite["expires"])}}


def _admin_posting():
    """The admin sending a Users page form; the outage page or 403 otherwise."""
    if redis_down():
        abort(make_response(outage_page()))
    admin = session_user(_page_redis())
    if admin is None or not admin["admin"]:
        abort(403)
    return admin


def _then_show(**once):
    """Redirect to the Users page, which shows ``once`` the one time (POST/redirect/GET)."""
    session[SHOW_ONCE] = once
    return redirect(url_for("pages.users"), 303)


@bp.route("/users", methods=["GET", "POST"])
def users():
    """Admins: every user, the invites not yet used, and the form that adds a user."""
    if request.method == "GET":
        return _page("users.html", admin_only=True, **session.pop(SHOW_ONCE, {}), **_listing())
    shown = _add(_admin_posting())
    if "error" in shown:  # the form again, as sent, with what is wrong
        return _page("users.html", admin_only=True, **shown, **_listing()), 400
    return _then_show(**shown)


@bp.route("/users/invites/<invite_id>/withdraw", methods=["POST"])
def withdraw_invite(invite_id):
    """Admins: withdraw an invite, so that its link answers 410 like a spent one."""
    _admin_posting()
    invite = invites.withdraw(_page_redis(), invite_id)
    return _then_show(withdrawn={"name": invite["name"] if invite else None})


@bp.route("/invite/<token>", methods=["GET", "POST"])
def invite(token):
    """Anyone with the link: set the invited account's password (once, before it expires)."""
    if redis_down():
        return outage_page()
    client = _page_redis()
    pending = invites.pending(client, token)
    if pending is None:
        return render_template("invite.html", invite=None), 410
    if request.method == "GET":
        return render_template("invite.html", invite=pending)
    password = request.form.get("password", "")
    if len(password) < accounts.MIN_PASSWORD:
        error = _("The password must be at least %(count)d characters.", count=accounts.MIN_PASSWORD)
    elif password != request.form.get("confirm", ""):
        error = _("The two passwords differ: type the same one twice.")
    else:
        try:
            invites.accept(client, token, password)
        except invites.InviteError:
            return render_template("invite.html", invite=None), 410
        except accounts.AccountError:
            error = _("There is a user %(name)s already: ask for a new invite.", name=pending["name"])
        else:
            flash(_("Your password is set: sign in as %(name)s.", name=pending["name"]))
            return redirect(url_for("auth.login"))
    return render_template("invite.html", invite=pending, error=error), 400
