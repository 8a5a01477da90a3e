"""Signed, expiring tokens that browsers and clients present to Socket.IO and REST.

A token is the user name and the user's token key, signed with the app's
SECRET_KEY and a timestamp (itsdangerous). It carries no privileges of its
own: each use looks the user up again and compares the key, so a deleted
user's tokens stop working at once, and so do all of a user's tokens when
the key is replaced (``flask --app wsgi users revoke-tokens NAME``), or when
a user of the same name is created anew.
"""
import functools
import traceback

from itsdangerous import BadData, SignatureExpired, URLSafeTimedSerializer

SALT = "herald.token.v1"


class TokenError(ValueError):
    """A token was missing, forged or expired; the message says which."""


@functools.lru_cache(maxsize=8)
def _serializer(secret):
    """One serializer per secret, made once (it holds no state between tokens): making
    it anew was a fifth of a token check, which every Socket.IO connect makes."""
    return URLSafeTimedSerializer(secret, salt=SALT)


def issue(secret, username, token_key=""):
    """A new token for ``username``, bound to their current ``token_key``."""
    return _serializer(secret).dumps({"u": username, "k": token_key})


def refusal(reason, cause):
    """``TokenError(reason)`` for a library's error ``cause``, its frames let go.

    itsdangerous keeps an error in a local of the frame that raises another
    (``sig_error``, ``last_exception``): error, traceback and frames make a
    reference cycle, which the TokenError kept as its ``__context__``. Only the
    cyclic collector frees one, and wsgi.py has it run a full collection
    rarely: each refused connect stayed in memory (issue 35). So the frames of
    ``cause`` and of the errors it was raised while handling are cleared
    (tests/unit/web/auth/test_refusal_cycles.py).
    """
    seen = set()
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        traceback.clear_frames(cause.__traceback__)  # (skips the frames still running)
        cause.__traceback__ = None
        cause = cause.__context__
    return TokenError(reason)


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
    except SignatureExpired as exc:
        raise refusal("token has expired", exc) from None
    except BadData as exc:  # a bad signature, timestamp or payload
        raise refusal("token is invalid", exc) from None
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
