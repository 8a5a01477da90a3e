"""Who may call an API view: a decorator that checks, then hands the view its caller.

    @bp.get("/api/digests")
    @access.admins("only admins have email digests")
    def list_digests(who): ...

The caller is identified (app.web.auth.guards.identify: 401 when unknown); a
caller of the wrong kind is answered 403 with the given message; a browser
session changing something must also send the page's CSRF token.
"""
import functools

from flask import jsonify, request

from app.web import extensions
from app.web.auth import api_keys
from app.web.auth.guards import API_KEY_NOT_VALID, Unauthorized, identify

READS = ("GET", "HEAD")


def _guard(allowed, refusal, publishes=False):
    """``publishes``: the view hands a remembered API key to the publish script,
    which checks it (app/web/auth/api_keys.py); any other view checks it here."""
    def decorate(view):
        @functools.wraps(view)
        def guarded(*args, **kwargs):
            who = identify()
            if who.unverified and not publishes:
                who = verify(who)
            if not allowed(who):
                return jsonify(error=refusal), 403
            if who.kind == "session" and request.method not in READS:
                extensions.csrf.protect()
            return view(who, *args, **kwargs)
        return guarded
    return decorate


def users(refusal="an API key publishes; read with a user's token"):
    """Signed-in users and token holders, not API keys. A token limited to some
    topics passes: the view narrows what it reads and does (app/web/auth/scope.py)."""
    return _guard(lambda who: who.kind != "apikey", refusal)


LIMITED = ("this token is limited to some topics (its 'topics' claim), and this is an "
           "account-wide change or read; use a full token or a signed-in session")


def account(refusal=LIMITED):
    """Account-wide reads and changes: signed-in users and full tokens; neither API
    keys nor tokens limited to some topics (docs/contract.md, capabilities)."""
    return _guard(lambda who: who.kind != "apikey" and who.topics is None, refusal)


def admins(refusal):
    """Admins only (by session or full token: every admin route is account-wide, so a
    token limited to some topics is refused even if it were an admin's)."""
    return _guard(lambda who: who.kind != "apikey" and who.admin and who.topics is None, refusal)


def publishers(refusal="only admins and API keys may publish"):
    """API keys, and admins (by session or full token). The view publishes with
    ``api_keys.credential(who)`` (and answers anything else only after :func:`verify`)."""
    return _guard(lambda who: who.kind == "apikey" or (who.admin and who.topics is None), refusal,
                  publishes=True)


def verify(who):
    """``who``, its remembered API key checked against Redis now (Unauthorized when
    it was revoked)."""
    checked = api_keys.verified(extensions.redis(), extensions.herald().api_keys, who)
    if checked is None:
        raise Unauthorized(API_KEY_NOT_VALID)
    return checked


def refuse(who):
    """``who``'s remembered API key was found revoked by the publish script: it is
    forgotten, and the request answered 401 as for any unknown key."""
    extensions.herald().api_keys.forget(who.unverified)
    raise Unauthorized(API_KEY_NOT_VALID)
