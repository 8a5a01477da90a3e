"""Webhook endpoints, and what each has queued, parked and delivered. Kept in Redis,
every key in the hash slot of the tag ``{webhooks}`` (layout.py).

- ``herald:{webhooks}:endpoint:<id>``: the endpoint (hash: url, topics, min_severity,
  private, secret, created, created_by; values JSON), in the set
  ``herald:{webhooks}:endpoints``;
- ``…:<id>:queue``: deliveries waiting, in order (list of ``"<notification id> <body>"``);
  the head is the one being delivered, removed only once it is delivered or parked;
- ``…:<id>:attempt``: the head's retry state (item, attempts, next_at, last_error);
- ``…:<id>:parked``: deliveries given up on (JSON records, oldest first);
- ``…:<id>:stats``: delivered, failures, last_success_at, last_error, last_error_at,
  overflowed and dropped (parking.py).

The secret is shown once, when the endpoint is made; no read returns it.

Each change is one MULTI/EXEC on that slot, asked for as such (``transaction=True``):
a Redis Cluster client's ``pipeline()`` is not a transaction unless told.
"""
import secrets
import time

import orjson
import redis

from app.stream import groups
from app.stream.envelope import (
    SEVERITIES,
    SEVERITY_RANK,
    EnvelopeError,
    check_topic_list,
    id_key,
    topic_matches,
)
from app.webhooks import layout, outbound, sealing

ENDPOINTS = layout.ENDPOINTS
GROUP = "herald:webhooks"   # the webhook worker's consumer group on each shard's stream (not a key)
CHANGED = layout.CHANGED    # bumped on every change, so the worker reloads
FIELDS = ("url", "topics", "min_severity", "private", "secret")
CHANGEABLE = ("url", "topics", "min_severity", "private")
MAX_ENDPOINTS = 100
SECRET_MIN, SECRET_MAX = 16, 200


class WebhookError(ValueError):
    """An endpoint broke a rule; the message names the field."""


def key(endpoint_id):
    return layout.endpoint(endpoint_id)


def queue_key(endpoint_id):
    return layout.endpoint(endpoint_id, "queue")


def attempt_key(endpoint_id):
    return layout.endpoint(endpoint_id, "attempt")


def parked_key(endpoint_id):
    return layout.endpoint(endpoint_id, "parked")


def stats_key(endpoint_id):
    return layout.endpoint(endpoint_id, "stats")


def all_keys(endpoint_id):
    return [key(endpoint_id), queue_key(endpoint_id), attempt_key(endpoint_id),
            parked_key(endpoint_id), stats_key(endpoint_id)]


def delivery_id(endpoint_id, notification_id):
    """The ``Herald-Delivery`` id: the same for every attempt at one notification."""
    if isinstance(notification_id, bytes):
        notification_id = notification_id.decode()
    return f"{endpoint_id}.{notification_id}"


def validate(data, allowed=None, partial=False):
    """A new endpoint's fields from ``data``, checked (the URL resolved and judged);
    with ``partial``, only the changeable fields given."""
    if not isinstance(data, dict):
        raise WebhookError("body: must be a JSON object")
    unknown = set(data) - set(CHANGEABLE if partial else FIELDS)
    if unknown:
        name = sorted(unknown)[0]
        raise WebhookError(f"{name}: " + (
            "is changed by rotating it (POST /api/webhooks/ID/rotate)" if name == "secret"
            else "is not a known field"))
    if not partial:
        for required in ("url", "topics"):
            if required not in data:
                raise WebhookError(f"{required}: is required")
    clean = dict(data) if partial else {"min_severity": "info", "private": False, **data}
    if "url" in clean:
        try:
            outbound.check(clean["url"], allowed)
        except outbound.UrlRefused as exc:
            raise WebhookError(str(exc)) from None
    if "topics" in clean:
        try:
            clean["topics"] = check_topic_list(clean["topics"], most=50, least=1)
        except EnvelopeError as exc:
            raise WebhookError(str(exc)) from None
    if "min_severity" in clean and clean["min_severity"] not in SEVERITIES:
        raise WebhookError("min_severity: must be one of " + ", ".join(SEVERITIES))
    if "private" in clean and not isinstance(clean["private"], bool):
        raise WebhookError("private: must be true or false")
    if partial:
        return clean
    clean["secret"] = checked_secret(clean.get("secret"))
    return clean


def checked_secret(secret):
    """``secret`` when it may sign (a new one made when it is None); WebhookError otherwise."""
    if secret is None:
        return "whsec_" + secrets.token_urlsafe(32)
    if not (isinstance(secret, str) and SECRET_MIN <= len(secret) <= SECRET_MAX
            and secret.isascii() and secret.isprintable() and " " not in secret):
        raise WebhookError(f"secret: must be {SECRET_MIN}-{SECRET_MAX} printable ASCII "
                           "characters without spaces (or left out: Herald makes one)")
    return secret


def ensure_group(client):
    """Create the webhook worker's consumer group unless it exists: from now on, or, after
    ``herald:stream`` was recreated, from the new stream's beginning (app/stream/groups.py);
    in every shard's stream with ``STREAM_SHARDS=N``, each by its own epoch.

    Called when an endpoint is made too, so that what is published after it is
    delivered even if the worker has not started yet.
    """
    groups.ensure_all(client, GROUP)


def create(client, data, created_by, allowed=None):
    """Register an endpoint; returns it, secret included (the only time it is shown)."""
    clean = validate(data, allowed)
    if client.scard(ENDPOINTS) >= MAX_ENDPOINTS:
        raise WebhookError(f"url: Herald takes at most {MAX_ENDPOINTS} webhook endpoints")
    ensure_group(client)
    endpoint_id = secrets.token_hex(6)
    record = {**clean, "created": time.time(), "created_by": created_by}
    stored = {**record, "secret": sealing.seal(record["secret"])}  # sealing.py
    with client.pipeline(transaction=True) as pipe:  # one slot: layout.py
        pipe.hset(key(endpoint_id), mapping={k: orjson.dumps(v) for k, v in stored.items()})
        pipe.sadd(ENDPOINTS, endpoint_id)
        pipe.incr(CHANGED)
        pipe.execute()
    return {"id": endpoint_id, **record}


def decode(endpoint_id, raw):
    """An endpoint's record from its hash, secrets unsealed (sealing.py); a secret this
    SECRET_KEY cannot open is None, and ``secret_error`` says why."""
    record = {k.decode(): orjson.loads(v) for k, v in raw.items()}
    record["id"] = endpoint_id
    for field in ("secret", "previous_secret"):
        try:
            record[field] = sealing.unseal(record.get(field))
        except sealing.Unreadable as exc:
            record[field], record["secret_error"] = None, str(exc)
    return record


def get(client, endpoint_id):
    """The endpoint (secret included: for the worker), or None."""
    if not isinstance(endpoint_id, str) or len(endpoint_id) > 64:
        return None
    raw = client.hgetall(key(endpoint_id))
    return decode(endpoint_id, raw) if raw else None


def list_all(client):
    """Every endpoint, oldest first."""
    ids = sorted(i.decode() for i in client.smembers(ENDPOINTS))
    with client.pipeline(transaction=False) as pipe:
        for endpoint_id in ids:
            pipe.hgetall(key(endpoint_id))
        raws = pipe.execute()
    records = [decode(i, raw) for i, raw in zip(ids, raws, strict=True) if raw]
    return sorted(records, key=lambda r: r["created"])


def update(client, endpoint_id, data, allowed=None):
    """Change some of an endpoint's fields (``CHANGEABLE``); returns it, or None when
    there is none. What is queued goes to the new URL; the new topics, severity and
    ``private`` apply to what is published from now on."""
    clean = validate(data, allowed, partial=True)
    if get(client, endpoint_id) is None:
        return None
    with client.pipeline(transaction=True) as pipe:  # one slot: layout.py
        pipe.watch(key(endpoint_id))
        if not pipe.exists(key(endpoint_id)):
            return None
        pipe.multi()
        if clean:
            pipe.hset(key(endpoint_id), mapping={k: orjson.dumps(v) for k, v in clean.items()})
        pipe.incr(CHANGED)
        try:
            pipe.execute()
        except redis.WatchError:
            return None  # deleted meanwhile
    return get(client, endpoint_id)


def delete(client, endpoint_id):
    """Delete the endpoint with its queue, parked deliveries and figures; False when none."""
    if get(client, endpoint_id) is None:
        return False
    with client.pipeline(transaction=True) as pipe:  # one slot: layout.py
        pipe.delete(*all_keys(endpoint_id))
        pipe.srem(ENDPOINTS, endpoint_id)
        pipe.incr(CHANGED)
        pipe.execute()
    return True


def wants(record, topic, severity, user):
    """True when the endpoint takes a notification of ``topic``/``severity``, private
    to ``user`` (or public when empty)."""
    if user and not record["private"]:
        return False
    if SEVERITY_RANK.get(severity, 0) < SEVERITY_RANK[record["min_severity"]]:
        return False
    return any(topic_matches(prefix, topic) for prefix in record["topics"])


def state(client, endpoint_id, now=None):
    """What the endpoint has waiting and has done: counts, last error, last success."""
    now = time.time() if now is None else now
    with client.pipeline(transaction=False) as pipe:
        pipe.llen(queue_key(endpoint_id))
        pipe.lindex(queue_key(endpoint_id), 0)
        pipe.llen(parked_key(endpoint_id))
        pipe.hgetall(stats_key(endpoint_id))
        pipe.hgetall(attempt_key(endpoint_id))
        pending, head, parked, stats, attempt = pipe.execute()
    stats = {k.decode(): v.decode() for k, v in stats.items()}
    oldest = None
    if head:
        oldest = max(0.0, now - id_key(head.split(b" ", 1)[0])[0] / 1000)
    retrying = 0
    if head and attempt.get(b"item") == head:
        retrying = int(attempt.get(b"attempts", 0))

    def number(name, kind=int):
        return kind(stats[name]) if name in stats else None
    return {
        "pending": pending,
        "parked": parked,
        "oldest_pending_seconds": oldest,
        "retrying": retrying,
        "next_attempt_at": float(attempt[b"next_at"]) if retrying else None,
        "delivered": number("delivered") or 0,
        "failures": number("failures") or 0,
        "last_success_at": number("last_success_at", float),
        "last_error": stats.get("last_error"),
        "last_error_at": number("last_error_at", float),
        "overflowed": number("overflowed") or 0,
        "dropped": number("dropped") or 0,
    }


def parked(client, endpoint_id, limit=100):
    """The endpoint's parked deliveries, oldest first (at most ``limit``)."""
    return [orjson.loads(raw) for raw in client.lrange(parked_key(endpoint_id), 0, limit - 1)]


# KEYS: endpoint, queue, parked, stats. Moves every parked delivery back to the head
# of the queue, oldest first, so they go before what came after them; each is tried
# again (once only, when its retry period is over).
_REQUEUE_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local parked = redis.call('LRANGE', KEYS[3], 0, -1)
for i = #parked, 1, -1 do
  local record = cjson.decode(parked[i])
  redis.call('LPUSH', KEYS[2], record['notification'] .. ' ' .. record['body'])
end
redis.call('DEL', KEYS[3])
redis.call('HDEL', KEYS[4], 'expired')
return #parked
"""


def requeue_parked(client, endpoint_id):
    """Deliver the parked ones again (first, in their order); how many, or None
    when there is no such endpoint."""
    moved = client.eval(_REQUEUE_LUA, 4, key(endpoint_id), queue_key(endpoint_id),
                        parked_key(endpoint_id), stats_key(endpoint_id))
    return None if moved == -1 else moved
