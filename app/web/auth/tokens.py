"""Signed, expiring tokens that browsers and clients present to Socket.IO and REST.

A token is the user name and the user's token key, signed with the app's
SECRET_KEY and a timestamp (itsdangerous). It carries no privileges of its
own: each use looks the user up again and compares the key, so a deleted
user's tokens stop working at once, and so do all of a user's tokens when
the key is replaced (``flask --app wsgi users revoke-tokens NAME``), or when
a user of the same name is created anew.
"""
import functools
import time
import traceback

from itsdangerous import BadData, URLSafeTimedSerializer

SALT = "herald.token.v1"
# Tokens whose signature this process has checked, (secret, token) -> (name, key,
# issued): at most this many, the oldest let go first (verify_with_expiry); about
# 1.8 MB when full (tokens of 90 characters, with the tokens themselves).
SIGNED_KEEP = 4096
_signed = {}


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
    seconds) the token stops being accepted, ``max_age`` after it was issued.

    A token whose signature this process checked before is not checked again
    (:func:`signed`): herald.js presents the same token at every reconnect, and
    the signature, its payload's decoding and the JWT shape check were 6% of a
    reconnect's CPU (docs/capacity.md). Its age is checked at every use, as itsdangerous does
    (whole seconds; one from the future is refused too), and the caller still
    compares its key with the user's current one, so an expired or revoked token
    is refused as before."""
    if not token or not isinstance(token, str):
        raise TokenError("token is missing")
    name, key, issued = signed(secret, token)
    age = int(time.time()) - issued
    if age > max_age or age < 0:
        raise TokenError("token has expired")
    return name, key, issued + max_age


def signed(secret, token):
    """``(user name, token key, issued)`` of ``token`` if its signature and payload are
    genuine, whatever its age; remembered for the SIGNED_KEEP tokens checked last, so
    only a token never seen here costs a signature check. What is refused is never
    remembered: a forged token is checked again each time it comes."""
    known = _signed.get((secret, token))
    if known is not None:
        return known
    try:
        payload, stamp = _serializer(secret).loads(token, return_timestamp=True)
    except BadData as exc:  # a bad signature, timestamp or payload
        raise refusal("token is invalid", exc) from None
    if (not isinstance(payload, dict) or not isinstance(payload.get("u"), str)
            or not isinstance(payload.get("k", ""), str)):
        raise TokenError("token is invalid")
    known = (payload["u"], payload.get("k", ""), int(stamp.timestamp()))
    if len(_signed) >= SIGNED_KEEP:
        try:
            _signed.pop(next(iter(_signed)), None)  # the oldest (a dict keeps its order)
        except RuntimeError:  # (threads: another changed it meanwhile, and made room)
            pass
    _signed[(secret, token)] = known
    return known


def signed_before(secret, token):
    """True when ``token`` is one of this process's remembered genuine tokens (:func:`signed`)."""
    return (secret, token) in _signed


def check_user(user, key):
    """Raise TokenError unless ``user`` (a dict from accounts.get_user, or None)
    exists and still has the token key ``key``."""
    if user is None:
        raise TokenError("token is for a user that no longer exists")
    if user["token_key"] != key:
        raise TokenError("token has been revoked")
