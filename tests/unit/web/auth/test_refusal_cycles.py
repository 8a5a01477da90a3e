"""A refused token leaves nothing for the cyclic garbage collector.

itsdangerous raises the last of its signers' errors from a frame that still
holds it in a local (``last_exception``): the error, its traceback and that
frame form a reference cycle, which Herald's translation into TokenError kept
(as its ``__context__``). Each refused Socket.IO connect left ~1 KB that only
a full collection frees, and wsgi.py runs one rarely (issue 35). Every path
that refuses a token must let such a traceback go.
"""
import gc
import time

import jwt
import pytest

from app.web.auth import stream_tokens, tokens
from app.web.auth.bearer import Identity
from app.web.auth.host_tokens import HostTokens

SECRET = "a-signing-secret-of-thirty-two-bytes-or-more"
ATTEMPTS = 20


def _jwt(claims, key=SECRET, alg="HS256"):
    return jwt.encode(claims, key, algorithm=alg)


def _refusals():
    now = int(time.time())
    host = HostTokens(SECRET)
    forged = tokens.issue("another-secret-of-thirty-two-bytes-or-more", "ann")
    old_stream = stream_tokens.issue(SECRET, Identity("ann", False, "token"), "key")
    return {
        "forged token": lambda: tokens.verify_with_expiry(SECRET, forged, 60),
        "garbage token": lambda: tokens.verify_with_expiry(SECRET, "forged", 60),
        "expired token": lambda: tokens.verify_with_expiry(SECRET, tokens.issue(SECRET, "ann"), -1),
        "forged stream token": lambda: stream_tokens.verify(None, "other-" + SECRET, old_stream, 60),
        "expired stream token": lambda: stream_tokens.verify(None, SECRET, old_stream, -1),
        "malformed JWT": lambda: host.verify("eyJ.eyJ.sig"),
        "JWT of another key": lambda: host.verify(_jwt({"sub": "a", "exp": now + 60}, "x" * 40)),
        "expired JWT": lambda: host.verify(_jwt({"sub": "a", "exp": now - 600})),
        "JWT without sub": lambda: host.verify(_jwt({"exp": now + 60})),
        "JWT with a bad sub": lambda: host.verify(_jwt({"sub": 5.5, "exp": now + 60})),
    }


@pytest.mark.parametrize("kind", sorted(_refusals()))
def test_a_refused_token_leaves_no_reference_cycle(kind):
    refuse = _refusals()[kind]
    gc.collect()
    gc.disable()
    try:
        for _ in range(ATTEMPTS):
            with pytest.raises(tokens.TokenError):
                refuse()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        # A refusal raises no OSError; one in the garbage is another thread's of this
        # test process (a client of an earlier test retrying a closed port), which the
        # disabled collector gathered meanwhile: it once failed this test in a full run.
        left = [type(o).__name__ for o in gc.garbage
                if isinstance(o, BaseException) and not isinstance(o, OSError)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == [], f"{kind}: {ATTEMPTS} refusals left exceptions in cycles: {left}"
