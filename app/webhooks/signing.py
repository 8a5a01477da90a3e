"""The ``Herald-Signature`` header: ``t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=…]``.

Each ``v1`` is the HMAC-SHA256, with one of the endpoint's secrets, of

    f"{t}.{delivery}.".encode() + body

where ``delivery`` is the ``Herald-Delivery`` header and ``body`` the exact
bytes POSTed. Signing the delivery id with the body and the time means a
captured request cannot be re-sent under a new ``Herald-Delivery`` (to slip
past a receiver's repeat check), nor later than the receiver's tolerance.
While a secret is being rotated the header carries one ``v1`` per secret
(the new one first), so a receiver with either verifies. A receiver
recomputes it, compares in constant time and refuses a timestamp too far
from its clock; see docs/webhooks.md (and ``herald_client.webhooks.verify``).

    >>> header = sign("whsec_x", b'{"id":"1-0"}', "ab12.1-0", 1700000000)
    >>> verify("whsec_x", b'{"id":"1-0"}', header, "ab12.1-0", now=1700000010)
    True
"""
import hashlib
import hmac
import time

TOLERANCE = 300  # seconds a receiver should accept between t and its clock


def digest(secret, body, delivery, timestamp):
    message = f"{int(timestamp)}.{delivery}.".encode() + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def sign(secrets, body, delivery, timestamp=None):
    """The header value for ``body`` (bytes) of delivery ``delivery`` signed now (or at
    ``timestamp``) with ``secrets``: one secret, or several (one ``v1`` each, in order)."""
    timestamp = int(time.time() if timestamp is None else timestamp)
    secrets = [secrets] if isinstance(secrets, str) else secrets
    return ",".join([f"t={timestamp}",
                     *(f"v1={digest(secret, body, delivery, timestamp)}" for secret in secrets)])


def verify(secret, body, header, delivery, now=None, tolerance=TOLERANCE):
    """True when ``header`` signs ``body`` as delivery ``delivery`` with ``secret``,
    within ``tolerance`` seconds of ``now``."""
    try:
        fields = [item.split("=", 1) for item in header.split(",")]
        timestamp = int(dict(fields)["t"])
    except (ValueError, KeyError):
        return False
    now = time.time() if now is None else now
    if abs(now - timestamp) > tolerance:
        return False
    expected = digest(secret, body, delivery, timestamp)
    return any(key == "v1" and hmac.compare_digest(expected, value) for key, value in fields)
