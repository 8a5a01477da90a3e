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
from app.web.auth.guards import identify

READS = ("GET", "HEAD")


def _guard(allowed, refusal):
    def decorate(view):
        @functools.wraps(view)
        def guarded(*args, **kwargs):
            who = identify()
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
    """Admins only (by session or token)."""
    return _guard(lambda who: who.kind != "apikey" and who.admin, refusal)


def publishers(refusal="only admins and API keys may publish"):
    """API keys, and admins."""
    return _guard(lambda who: who.kind == "apikey" or who.admin, refusal)
