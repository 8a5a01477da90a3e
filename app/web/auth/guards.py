"""Who is making this request: a signed-in browser, a token holder or a publisher.

``Authorization: Bearer X`` carries either an API key (``hk_…``, a
publisher) or a user's token: one from ``POST /auth/token``, or a JWT the
host app minted (see bearer.py). Without the header the Flask session
decides. A bad credential is refused, never ignored in favour of another.
"""
from flask import request, session

from app.users import accounts
from app.web import extensions
from app.web.auth import tokens
from app.web.auth.bearer import Identity

API_KEY_NOT_VALID = "API key is not valid"


class Unauthorized(Exception):
    """No valid credential; the message says what was wrong (answered with 401)."""


def session_user(client=None):
    """The signed-in user of this browser session, or None: also when the user is
    gone, or signed out (anywhere) or had their tokens revoked since, which gives
    the user a new token key than the one this session was signed in with.
    ``client``: the Redis client to ask (the app's by default; pages pass one with
    shorter timeouts)."""
    name = session.get("user")
    if not name:
        return None
    user = accounts.get_user(client or extensions.redis(), name)
    if user is None or session.get("key") != user["token_key"]:
        return None
    return user


def identify():
    """The Identity behind this request; raises Unauthorized."""
    header = request.headers.get("Authorization")
    if header is not None:
        scheme, _, credential = header.partition(" ")
        if scheme.lower() != "bearer" or not credential.strip():
            raise Unauthorized("Authorization header must be 'Bearer <token or API key>'")
        credential = credential.strip()
        if credential.startswith(accounts.API_KEY_PREFIX):
            name, unverified = extensions.herald().api_keys.identify(
                extensions.redis(), credential)
            if name is None:
                raise Unauthorized(API_KEY_NOT_VALID)
            return Identity(name, False, "apikey", unverified=unverified)
        try:
            return extensions.herald().tokens.verify(credential)
        except tokens.TokenError as exc:
            raise Unauthorized(str(exc)) from None
    user = session_user()
    if user is None:
        raise Unauthorized("sign in, or send 'Authorization: Bearer <token or API key>'")
    return Identity(user["name"], user["admin"], "session")
