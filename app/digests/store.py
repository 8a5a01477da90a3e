"""Digest subscriptions: who gets which email, when. Kept in Redis.

A subscription is the hash ``herald:{digests}:<id>`` (fields below, lists as
JSON) in the set ``herald:{digests}:all`` (every digest key shares the hash tag
``{digests}``, one Redis Cluster slot: layout.py); it belongs to the admin who made it
(``owner``), and only its owner reads, changes or deletes it. Its fields:

- ``email``: where to send (validated);
- ``topics``: topic prefixes (``*`` for all);
- ``min_severity``: the least severe notification it collects;
- ``schedule`` and ``timezone``: see schedule.py;
- ``enabled``: false pauses it (nothing collected, nothing sent);
- ``critical_now``: a critical notification is emailed on its own at once,
  and not repeated in the digest;
- ``exclude``: topic prefixes inside ``topics`` it leaves out (a more
  specific preference of its owner's says otherwise for them);
- ``quiet``: ``{"from": "HH:MM", "to": "HH:MM"}`` in ``timezone``, or null:
  no email goes out in those hours (what is due waits for their end);
- ``managed``: made from its owner's preferences (app/users/preferences.py), which
  rewrite it; the Digests page lists only the others.
"""
import re
import secrets
import time

import orjson

from app.digests.layout import name
from app.digests.schedule import Schedule, ScheduleError, check
from app.stream import groups
from app.stream.envelope import (
    SEVERITIES,
    SEVERITY_RANK,
    EnvelopeError,
    check_topic_list,
    topic_matches,
)

DIGESTS = name("all")
GROUP = "herald:digests"  # the digest worker's consumer group on each shard's stream (not a key)
CHANGED = name("changed")  # bumped on every change, so workers reload
FIELDS = ("email", "topics", "min_severity", "schedule", "timezone", "enabled", "critical_now",
          "exclude", "quiet", "managed")
HHMM_RE = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]\Z")
EMAIL_RE = re.compile(r"[^@\s<>,;\"]+@[^@\s<>,;\"]+\.[^@\s<>,;\".]+\Z")
DEFAULTS = {"min_severity": "info", "schedule": "daily@08:00", "timezone": "UTC",
            "enabled": True, "critical_now": False, "exclude": [], "quiet": None,
            "managed": False}


class DigestError(ValueError):
    """A digest subscription broke a rule; the message starts with the field (``field``)."""

    @property
    def field(self):
        return str(self).partition(":")[0]


def key(digest_id):
    return name(digest_id)


def validate(data, partial=False):
    """The known fields of ``data``, checked; with ``partial`` only those given."""
    if not isinstance(data, dict):
        raise DigestError("body: must be a JSON object")
    unknown = set(data) - set(FIELDS)
    if unknown:
        raise DigestError(f"{sorted(unknown)[0]}: is not a known field")
    clean = {} if partial else dict(DEFAULTS)
    clean.update({k: v for k, v in data.items() if k in FIELDS})
    if not partial:
        for required in ("email", "topics"):
            if required not in data:
                raise DigestError(f"{required}: is required")
    if "email" in clean:
        email = clean["email"]
        if not isinstance(email, str) or len(email) > 254 or not EMAIL_RE.match(email):
            raise DigestError("email: must be an email address like ops@example.com")
    if "topics" in clean:
        try:
            clean["topics"] = check_topic_list(clean["topics"], most=50, least=1)
        except EnvelopeError as exc:
            raise DigestError(str(exc)) from None
    if "min_severity" in clean and clean["min_severity"] not in SEVERITIES:
        raise DigestError("min_severity: must be one of " + ", ".join(SEVERITIES))
    for flag in ("enabled", "critical_now", "managed"):
        if flag in clean and not isinstance(clean[flag], bool):
            raise DigestError(f"{flag}: must be true or false")
    if clean.get("exclude"):
        try:
            clean["exclude"] = check_topic_list(clean["exclude"], most=50, field="exclude")
        except EnvelopeError as exc:
            raise DigestError(str(exc)) from None
    if clean.get("quiet") is not None:
        quiet = clean["quiet"]
        if not (isinstance(quiet, dict) and set(quiet) == {"from", "to"}
                and all(isinstance(v, str) and HHMM_RE.match(v) for v in quiet.values())
                and quiet["from"] != quiet["to"]):
            raise DigestError('quiet: must be null or {"from": "HH:MM", "to": "HH:MM"}, '
                              "two different times")
    return clean


def quiet_now(record, moment):
    """True when ``moment`` (UNIX seconds) falls in ``record``'s quiet hours."""
    quiet = record.get("quiet")
    if not quiet:
        return False
    local = schedule_of(record).local(moment).strftime("%H:%M")
    start, end = quiet["from"], quiet["to"]
    return start <= local < end if start < end else (local >= start or local < end)


def _check_schedule(record):
    try:
        check(record["schedule"], record["timezone"])
    except ScheduleError as exc:
        raise DigestError(str(exc)) from None


def _encode(record):
    return {k: orjson.dumps(v) for k, v in record.items()}


def _decode(digest_id, raw):
    record = {k.decode(): orjson.loads(v) for k, v in raw.items()}
    record["id"] = digest_id
    return record


def ensure_group(client):
    """Create the digest worker's consumer group unless it exists: from now on, or, after
    ``herald:stream`` was recreated, from the new stream's beginning (app/stream/groups.py);
    in every shard's stream with ``STREAM_SHARDS=N``, each by its own epoch.

    Called when a subscription is made too, so that what is published after it is
    collected even if the worker has not started yet.
    """
    groups.ensure_all(client, GROUP)


class DigestLimit(DigestError):
    """The owner has as many digest subscriptions as one may."""


MAX_PER_OWNER = 20  # each is worked on for every notification: a bound per owner


def create(client, owner, data, limit=MAX_PER_OWNER):
    clean = validate(data)
    _check_schedule(clean)
    if len(list_all(client, owner)) >= limit:
        raise DigestLimit(f"digests: at most {limit} per user; delete one to make another")
    ensure_group(client)
    digest_id = secrets.token_hex(6)
    record = dict(clean, owner=owner, created=int(time.time()))
    # transaction=True: a cluster's pipeline is not a MULTI/EXEC unless asked (one slot)
    with client.pipeline(transaction=True) as pipe:
        pipe.hset(key(digest_id), mapping=_encode(record))
        pipe.sadd(DIGESTS, digest_id)
        pipe.incr(CHANGED)
        pipe.execute()
    return get(client, digest_id)


def get(client, digest_id, owner=None):
    """The subscription, or None (also when ``owner`` is given and is not its owner)."""
    if not isinstance(digest_id, str) or not re.fullmatch(r"[0-9a-f]{12}", digest_id):
        return None
    raw = client.hgetall(key(digest_id))
    if not raw:
        return None
    record = _decode(digest_id, raw)
    if owner is not None and record["owner"] != owner:
        return None
    return record


def list_all(client, owner=None):
    """Every subscription (of ``owner``, if given), oldest first."""
    ids = sorted(i.decode() for i in client.smembers(DIGESTS))
    with client.pipeline(transaction=False) as pipe:
        for digest_id in ids:
            pipe.hgetall(key(digest_id))
        raws = pipe.execute()
    records = [_decode(i, raw) for i, raw in zip(ids, raws, strict=True) if raw]
    records = [r for r in records if owner is None or r["owner"] == owner]
    return sorted(records, key=lambda r: (r["created"], r["id"]))


def update(client, digest_id, owner, data):
    record = get(client, digest_id, owner)
    if record is None:
        return None
    changes = validate(data, partial=True)
    merged = dict(record, **changes)
    _check_schedule(merged)
    with client.pipeline(transaction=True) as pipe:
        pipe.hset(key(digest_id), mapping=_encode(changes))
        pipe.incr(CHANGED)
        pipe.execute()
    return get(client, digest_id)


def delete(client, digest_id, owner):
    if get(client, digest_id, owner) is None:
        return False
    windows = [w.decode() for w in client.zrange(f"{key(digest_id)}:windows", 0, -1)]
    with client.pipeline(transaction=True) as pipe:
        pipe.delete(key(digest_id), f"{key(digest_id)}:windows", f"{key(digest_id)}:closed")
        for window in windows:
            pipe.delete(f"{key(digest_id)}:w:{window}:counts", f"{key(digest_id)}:w:{window}:items")
        pipe.srem(DIGESTS, digest_id)
        pipe.incr(CHANGED)
        pipe.execute()
    return True


def wants(record, envelope):
    """True when the enabled subscription ``record`` collects ``envelope``.

    A private notification goes only to its owner's own subscriptions, made
    before it was published: one published earlier was for whoever held the
    name then (an account deleted and created anew, docs/contract.md). A
    ``kind: "data"`` event (a record changed, for programs) is never collected,
    so never emailed, not even a critical one.
    """
    if not record["enabled"] or envelope.get("kind") == "data":
        return False
    owner = envelope.get("user")
    if owner and owner != record["owner"]:
        return False
    if owner and "id" in envelope and int(envelope["id"].split("-")[0]) < record["created"] * 1000:
        return False
    if SEVERITY_RANK[envelope.get("severity", "info")] < SEVERITY_RANK[record["min_severity"]]:
        return False
    if any(topic_matches(prefix, envelope["topic"]) for prefix in record.get("exclude", ())):
        return False
    return any(topic_matches(prefix, envelope["topic"]) for prefix in record["topics"])


def schedule_of(record):
    return Schedule(record["schedule"], record["timezone"])
