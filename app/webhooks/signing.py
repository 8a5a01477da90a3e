"""The ``Herald-Signature`` header: ``t=<unix seconds>,v1=<hex HMAC-SHA256>``.

The HMAC is over ``f"{t}.{body}"`` (the exact bytes POSTed) with the
endpoint's secret, as Stripe and Svix sign theirs. A receiver recomputes it,
compares in constant time and refuses a timestamp too far from its clock
(replays); see docs/webhooks.md for a receiver's snippet.

    >>> header = sign("whsec_x", b'{"id":"1-0"}', 1700000000)
    >>> verify("whsec_x", b'{"id":"1-0"}', header, now=1700000010)
    True
"""
import hashlib
import hmac
import time

TOLERANCE = 300  # seconds a receiver should accept between t and its clock


def digest(secret, body, timestamp):
    message = str(int(timestamp)).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def sign(secret, body, timestamp=None):
    """The header value for ``body`` (bytes) signed now (or at ``timestamp``)."""
    timestamp = int(time.time() if timestamp is None else timestamp)
    return f"t={timestamp},v1={digest(secret, body, timestamp)}"


def verify(secret, body, header, now=None, tolerance=TOLERANCE):
    """True when ``header`` signs ``body`` with ``secret``, within ``tolerance`` seconds."""
    try:
        parts = dict(item.split("=", 1) for item in header.split(","))
        timestamp = int(parts["t"])
    except (ValueError, KeyError):
        return False
    now = time.time() if now is None else now
    if abs(now - timestamp) > tolerance:
        return False
    expected = digest(secret, body, timestamp)
    return any(hmac.compare_digest(expected, value)
               for key, value in (item.split("=", 1) for item in header.split(","))
               if key == "v1")
