"""Receiving Herald's webhooks: check that a request is Herald's, unaltered and fresh.

    from herald_client.webhooks import verify

    @app.post("/herald")
    def herald_hook():
        if not verify(SECRET, request.get_data(), request.headers.get("Herald-Signature", ""),
                      request.headers.get("Herald-Delivery", "")):
            abort(400)
        ...  # then drop a Herald-Delivery already handled (delivery is at least once)

``Herald-Signature`` is ``t=<unix seconds>,v1=<hex>[,v1=<hex>]``: each ``v1``
an HMAC-SHA256, with one of the endpoint's secrets (two while a secret is
rotated), of ``f"{t}.{Herald-Delivery}."`` followed by the raw body. The
delivery id is signed too, so a captured request re-sent under a new
``Herald-Delivery`` fails.
"""
import hashlib
import hmac
import time

TOLERANCE = 300  # seconds between the signature's time and this clock


def verify(secret, body, signature, delivery, tolerance=TOLERANCE, now=None):
    """True when ``signature`` (the Herald-Signature header) signs ``body`` (the raw
    request body, bytes) as delivery ``delivery`` (the Herald-Delivery header) with
    ``secret``, made within ``tolerance`` seconds of now."""
    try:
        fields = [item.split("=", 1) for item in signature.split(",")]
        timestamp = int(dict(fields)["t"])
    except (ValueError, KeyError, AttributeError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.{delivery}.".encode() + body,
                        hashlib.sha256).hexdigest()
    return any(key == "v1" and hmac.compare_digest(expected, value) for key, value in fields)
