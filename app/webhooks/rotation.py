"""Rotating an endpoint's signing secret, with an overlap in which both secrets sign.

``rotate`` makes (or takes) a new secret; the old one becomes the endpoint's
``previous_secret`` until ``previous_until`` (``overlap`` seconds later,
24 h by default). Meanwhile every delivery's ``Herald-Signature`` carries
two ``v1=`` values, the new secret's first (signing.py), so a receiver may
switch to the new secret whenever it likes within the overlap. Rotating
again during an overlap drops the oldest secret at once: two sign at most.

    record = rotate(client, endpoint_id)            # {"id", "secret", "previous_until"}
    rotate(client, endpoint_id, "my-own-secret-0123", overlap=0)   # the old one stops now
"""
import time

import orjson
import redis

from app.webhooks import sealing, store

DEFAULT_OVERLAP = 86400.0  # seconds both secrets sign, unless the rotation says otherwise
MAX_OVERLAP = 7 * 86400.0


def signing_secrets(record, now=None):
    """The secrets that sign a delivery to ``record`` now: its secret, then the previous
    one while its overlap lasts."""
    now = time.time() if now is None else now
    previous = record.get("previous_secret")  # None too when it could not be unsealed
    if previous and now < (record.get("previous_until") or 0):
        return [record["secret"], previous]
    return [record["secret"]]


def check_overlap(overlap):
    if overlap is None:
        return DEFAULT_OVERLAP
    if isinstance(overlap, bool) or not isinstance(overlap, int | float) \
            or not 0 <= overlap <= MAX_OVERLAP:
        raise store.WebhookError(f"overlap: must be a number of seconds from 0 to {MAX_OVERLAP:g}"
                                 " (how long the old secret keeps signing too)")
    return float(overlap)


def rotate(client, endpoint_id, secret=None, overlap=None, now=None):
    """Give the endpoint a new secret (``secret``, or one Herald makes); the old one
    signs too for ``overlap`` seconds. Returns ``{"id", "secret", "previous_until"}``
    (the secret shown this once), or None when there is no such endpoint."""
    secret = store.checked_secret(secret)
    overlap = check_overlap(overlap)
    now = time.time() if now is None else now
    with client.pipeline(transaction=True) as pipe:  # WATCH works in one slot (layout.py)
        try:
            pipe.watch(store.key(endpoint_id))
            current = pipe.hget(store.key(endpoint_id), "secret")
            if current is None:
                return None
            until = now + overlap if overlap else None
            pipe.multi()
            pipe.hset(store.key(endpoint_id), mapping={
                "secret": orjson.dumps(sealing.seal(secret)),
                "previous_secret": current if until else orjson.dumps(None),
                "previous_until": orjson.dumps(until)})
            pipe.incr(store.CHANGED)
            pipe.execute()
        except redis.WatchError:
            return rotate(client, endpoint_id, secret, overlap, now)  # changed meanwhile: again
    return {"id": endpoint_id, "secret": secret, "previous_until": until}
