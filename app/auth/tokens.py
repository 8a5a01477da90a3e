"""Signed, expiring tokens that browsers and clients present to Socket.IO and REST.

A token is the user name signed with the app's SECRET_KEY and a timestamp
(itsdangerous). It carries no privileges of its own: each use looks the user
up again, so a deleted user's tokens stop working at once.
"""
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

SALT = "herald.token.v1"


class TokenError(ValueError):
    """A token was missing, forged or expired; the message says which."""


def _serializer(secret):
    return URLSafeTimedSerializer(secret, salt=SALT)


def issue(secret, username):
    """A new token for ``username``."""
    return _serializer(secret).dumps({"u": username})


def verify(secret, token, max_age):
    """The user name inside ``token`` if it is genuine and under ``max_age`` seconds old."""
    if not token or not isinstance(token, str):
        raise TokenError("token is missing")
    try:
        payload = _serializer(secret).loads(token, max_age=max_age)
    except SignatureExpired:
        raise TokenError("token has expired") from None
    except BadSignature:
        raise TokenError("token is invalid") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("u"), str):
        raise TokenError("token is invalid")
    return payload["u"]
