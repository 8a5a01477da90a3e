"""Signed, expiring tokens that browsers and clients present to Socket.IO and REST.

A token is the user name and the user's token key, signed with the app's
SECRET_KEY and a timestamp (itsdangerous). It carries no privileges of its
own: each use looks the user up again and compares the key, so a deleted
user's tokens stop working at once, and so do all of a user's tokens when
the key is replaced (``flask --app wsgi users revoke-tokens NAME``), or when
a user of the same name is created anew.
"""
from itsdangerous import BadData, SignatureExpired, URLSafeTimedSerializer

SALT = "herald.token.v1"


class TokenError(ValueError):
    """A token was missing, forged or expired; the message says which."""


def _serializer(secret):
    return URLSafeTimedSerializer(secret, salt=SALT)


def issue(secret, username, token_key=""):
    """A new token for ``username``, bound to their current ``token_key``."""
    return _serializer(secret).dumps({"u": username, "k": token_key})


def verify(secret, token, max_age):
    """``(user name, token key)`` from ``token`` if it is genuine and under ``max_age``
    seconds old; the caller compares the key with the user's current one."""
    return verify_with_expiry(secret, token, max_age)[:2]


def verify_with_expiry(secret, token, max_age):
    """``(user name, token key, expires)``: :func:`verify`, and the moment (UNIX
    seconds) the token stops being accepted, ``max_age`` after it was issued."""
    if not token or not isinstance(token, str):
        raise TokenError("token is missing")
    try:
        payload, issued = _serializer(secret).loads(token, max_age=max_age,
                                                    return_timestamp=True)
    except SignatureExpired:
        raise TokenError("token has expired") from None
    except BadData:  # a bad signature, timestamp or payload
        raise TokenError("token is invalid") from None
    if (not isinstance(payload, dict) or not isinstance(payload.get("u"), str)
            or not isinstance(payload.get("k", ""), str)):
        raise TokenError("token is invalid")
    return payload["u"], payload.get("k", ""), issued.timestamp() + max_age


def check_user(user, key):
    """Raise TokenError unless ``user`` (a dict from accounts.get_user, or None)
    exists and still has the token key ``key``."""
    if user is None:
        raise TokenError("token is for a user that no longer exists")
    if user["token_key"] != key:
        raise TokenError("token has been revoked")
