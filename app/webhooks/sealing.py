"""Webhook signing secrets sealed at rest, so that a copy of Redis does not give them away.

Each secret is stored as ``sealed:v1:`` and a Fernet token (AES-128-CBC with an
HMAC-SHA256, from ``cryptography``), under a key derived from ``SECRET_KEY``
by HKDF-SHA256. A secret stored in clear before sealing is read as it is (and
sealed at its next rotation).

The web processes seal and the webhook workers unseal, so every one of them
needs the same ``SECRET_KEY`` (which tokens already require of web processes).
When it changed since a secret was sealed, that secret cannot be read: the
endpoint's deliveries wait, not lost, and the worker's log says to rotate the
secret (``webhooks rotate ID`` or ``POST /api/webhooks/ID/rotate``).
"""
import base64
import functools

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app.settings import secret_key as configured_secret_key

PREFIX = "sealed:v1:"
INFO = b"herald.webhook-secrets.v1"
UNREADABLE_WAIT = 60.0  # seconds a sender waits before looking at an unreadable secret again


class Unreadable(ValueError):
    """A sealed secret that this SECRET_KEY cannot open."""


@functools.lru_cache(maxsize=4)
def _fernet(secret_key):
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=INFO).derive(
        secret_key.encode())
    return Fernet(base64.urlsafe_b64encode(derived))


def seal(secret, secret_key=None):
    """``secret`` as it is stored."""
    return PREFIX + _fernet(secret_key or configured_secret_key()).encrypt(secret.encode()).decode()


def unseal(stored, secret_key=None):
    """The secret in ``stored`` (as :func:`seal` made it, or in clear from before);
    Unreadable when it was sealed under another SECRET_KEY."""
    if not isinstance(stored, str) or not stored.startswith(PREFIX):
        return stored
    try:
        return _fernet(secret_key or configured_secret_key()).decrypt(
            stored[len(PREFIX):].encode()).decode()
    except InvalidToken:
        raise Unreadable("the signing secret was sealed under another SECRET_KEY: give every "
                         "web process and webhook worker the same SECRET_KEY, or rotate the "
                         "secret (webhooks rotate ID)") from None
