"""Who is making this request: a signed-in browser, a token holder or a publisher.

``Authorization: Bearer X`` carries either an API key (``hk_…``, a
publisher) or a token from ``POST /auth/token`` (a user). Without the header
the Flask session decides. A bad credential is refused, never ignored in
favour of another.
"""
from typing import NamedTuple

from flask import current_app, request, session

from .. import accounts, extensions
from . import tokens


class Unauthorized(Exception):
    """No valid credential; the message says what was wrong (answered with 401)."""


class Identity(NamedTuple):
    name: str
    admin: bool
    kind: str  # "session", "token" or "apikey"


def token_user(token):
    """The user dict for a token, raising TokenError when it is bad or the user is gone."""
    name, key = tokens.verify(current_app.config["SECRET_KEY"], token,
                              current_app.config["TOKEN_TTL"])
    user = accounts.get_user(extensions.redis(), name)
    tokens.check_user(user, key)
    return user


def session_user():
    """The signed-in user of this browser session, or None."""
    name = session.get("user")
    return accounts.get_user(extensions.redis(), name) if name else None


def identify():
    """The Identity behind this request; raises Unauthorized."""
    header = request.headers.get("Authorization")
    if header is not None:
        scheme, _, credential = header.partition(" ")
        if scheme.lower() != "bearer" or not credential.strip():
            raise Unauthorized("Authorization header must be 'Bearer <token or API key>'")
        credential = credential.strip()
        if credential.startswith(accounts.API_KEY_PREFIX):
            name = accounts.api_key_name(extensions.redis(), credential)
            if name is None:
                raise Unauthorized("API key is not valid")
            return Identity(name, False, "apikey")
        try:
            user = token_user(credential)
        except tokens.TokenError as exc:
            raise Unauthorized(str(exc)) from None
        return Identity(user["name"], user["admin"], "token")
    user = session_user()
    if user is None:
        raise Unauthorized("sign in, or send 'Authorization: Bearer <token or API key>'")
    return Identity(user["name"], user["admin"], "session")
