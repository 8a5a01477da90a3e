"""The notification envelope (version 1) and topic matching.

Every publisher, whatever its path into Herald (REST, CLI, workers, the
ZeroMQ bridge), goes through :func:`validate`, so one set of rules decides
what is accepted. A rejection raises :class:`EnvelopeError`, whose message
names the field and the rule it broke, e.g. ``"topic: must be dot-separated
segments of [a-z0-9_-]"``.

Topics are dot-separated segments; a subscription is a topic prefix that
matches on segment boundaries (``spark`` matches ``spark.job.succeeded`` but
never ``sparkle``), and ``*`` matches every topic.
"""
import re
import time

import orjson

from app.stream.field_rules import (  # noqa: F401 (user and stream ids: re-exported)
    CONTROL_RE,
    MAX_USER_CHARS,
    USER_ID_RULE,
    EnvelopeError,
    check_cursor,
    check_stream_id,
    check_unicode,
    check_url,
    check_user_id,
    depth,
    id_key,
)

MAX_ENVELOPE_BYTES = 64 * 1024
MAX_DATA_BYTES = 16 * 1024
MAX_DATA_DEPTH = 250  # orjson encodes at most 254 levels; data is one level inside the envelope
MAX_TOPIC_CHARS = 200
MAX_TITLE_CHARS = 200
MAX_BODY_CHARS = 4000
MAX_CORRELATION_CHARS = 128
MAX_ORIGIN_CHARS = 64

SEVERITIES = ("info", "success", "warning", "error", "critical")
SEVERITY_RANK = {name: rank for rank, name in enumerate(SEVERITIES)}
WILDCARD = "*"

TOPIC_RE = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\Z")
ORIGIN_RE = re.compile(r"[0-9a-fA-F]+\Z")
# Control characters (C0, DEL, C1); body text may keep tab and newlines.
BODY_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

SET_BY_HERALD = ("id", "ts")
FIELDS = ("topic", "title", "body", "severity", "data", "user", "origin",
          "correlation_id", "url")
KINDS = ("alert", "data")
KNOWN = FIELDS + ("kind",)  # kind is not copied like the others: see validate
# A data event's stored JSON starts with this (see validate): readers tell it on raw bytes.
DATA_PREFIX = b'{"kind":"data"'
# What addresses a user's private notifications (an envelope's ``user``, a host-app
# token's ``sub``): the host app's own id of its user, any text (check_user_id).

def _text(envelope, field, max_chars, control_re, required):
    value = envelope.get(field)
    if value is None:
        if required:
            raise EnvelopeError(field, "is required")
        return
    if not isinstance(value, str):
        raise EnvelopeError(field, "must be a string")
    if not 1 <= len(value) <= max_chars:
        raise EnvelopeError(field, f"must be 1-{max_chars} characters")
    if control_re.search(value):
        raise EnvelopeError(field, "must be plain text without control characters")
    check_unicode(field, value)


def validate(envelope):
    """Check an envelope from a publisher and return it normalised.

    The result holds only the fields that were given, with ``severity``
    defaulted to ``info``. ``id`` and ``ts`` are Herald's to set, so a
    publisher that sends them is refused, as is any unknown field.

    ``kind`` is ``alert`` (the default) or ``data``. An alert leaves it out,
    given or not, so ordinary notifications carry no extra bytes and one sent
    with ``"kind": "alert"`` is stored (and fingerprinted) as one sent without.
    A data event has it as its *first* key, so its encoded JSON starts with
    DATA_PREFIX and a reader decides on the raw bytes (app/stream/filters.py).

        >>> validate({"topic": "spark.job.started", "title": "Rollup"})["severity"]
        'info'
    """
    if not isinstance(envelope, dict):
        raise EnvelopeError("envelope", "must be a JSON object")
    for field in envelope:
        if field in SET_BY_HERALD:
            raise EnvelopeError(field, "is set by Herald and must not be sent")
        if field not in KNOWN:
            raise EnvelopeError(str(field)[:100], "is not a known field")

    topic = envelope.get("topic")
    if topic is None:
        raise EnvelopeError("topic", "is required")
    if not isinstance(topic, str):
        raise EnvelopeError("topic", "must be a string")
    if not 1 <= len(topic) <= MAX_TOPIC_CHARS:
        raise EnvelopeError("topic", f"must be 1-{MAX_TOPIC_CHARS} characters")
    if not TOPIC_RE.match(topic):
        raise EnvelopeError(
            "topic", "must be dot-separated segments of [a-z0-9_-], e.g. spark.job.succeeded")

    _text(envelope, "title", MAX_TITLE_CHARS, CONTROL_RE, required=True)
    _text(envelope, "body", MAX_BODY_CHARS, BODY_CONTROL_RE, required=False)
    _text(envelope, "correlation_id", MAX_CORRELATION_CHARS, CONTROL_RE, required=False)

    severity = envelope.get("severity", "info")
    if severity not in SEVERITIES:
        raise EnvelopeError("severity", "must be one of " + ", ".join(SEVERITIES))

    data = envelope.get("data")
    if data is not None:
        if not isinstance(data, dict):
            raise EnvelopeError("data", "must be a JSON object")
        try:
            raw, failure = orjson.dumps(data), None
        except TypeError as exc:  # orjson's JSONEncodeError: depth, big ints, surrogates, keys
            raw, failure = None, exc
        # The depth is checked whether or not orjson could encode it: orjson takes 254
        # levels, so data 251-254 deep would be stored against the rule, and 255 deep
        # would pass here and fail encode() once inside the envelope. Data of fewer than
        # MAX_DATA_DEPTH brackets cannot nest that deep, so only the rare rest is walked.
        if raw is None or raw.count(b"{") + raw.count(b"[") >= MAX_DATA_DEPTH:
            levels = depth(data, MAX_DATA_DEPTH, budget=MAX_DATA_BYTES)
            if levels is None:  # every value is at least a byte encoded
                raise EnvelopeError("data", f"must be at most {MAX_DATA_BYTES} bytes encoded")
            if levels > MAX_DATA_DEPTH:
                raise EnvelopeError("data", f"must be nested at most {MAX_DATA_DEPTH} deep")
        if failure is not None:
            raise EnvelopeError("data", f"must be JSON-encodable ({failure})") from None
        size = len(raw)
        if size > MAX_DATA_BYTES:
            raise EnvelopeError("data", f"must be at most {MAX_DATA_BYTES} bytes encoded")

    user = envelope.get("user")
    if user is not None:
        check_user_id(user)

    origin = envelope.get("origin")
    if origin is not None and not (
            isinstance(origin, str) and len(origin) <= MAX_ORIGIN_CHARS
            and ORIGIN_RE.match(origin)):
        raise EnvelopeError("origin", f"must be a hex string of 1-{MAX_ORIGIN_CHARS} characters")

    check_url(envelope.get("url"))

    kind = envelope.get("kind", "alert")
    if not isinstance(kind, str) or kind not in KINDS:
        raise EnvelopeError("kind", "must be alert or data")

    clean = {field: envelope[field] for field in FIELDS if envelope.get(field) is not None}
    if kind == "data":
        clean = {"kind": "data", **clean}  # first: see DATA_PREFIX
    clean["severity"] = severity
    return clean


def encode(envelope, ts):
    """Encode a validated envelope, stamped with ``ts``, as compact JSON bytes.

    Raises EnvelopeError when the whole would pass the 64 KiB limit, or (never for an
    envelope from :func:`validate`, which checks each field) cannot be encoded: a
    TypeError from orjson here would be a 500 over REST.
    """
    stamped = dict(envelope, ts=ts)
    try:
        raw = orjson.dumps(stamped)
    except TypeError as exc:  # orjson.JSONEncodeError
        raise EnvelopeError("envelope", f"must be JSON-encodable ({exc})") from None
    if len(raw) > MAX_ENVELOPE_BYTES:
        raise EnvelopeError("envelope", f"must be at most {MAX_ENVELOPE_BYTES} bytes encoded")
    return raw


_second_text = (None, "")


def now_iso():
    """The current UTC time as ISO-8601 with milliseconds, e.g. 2026-11-21T18:00:00.123Z.

    Publishing calls this for every notification, so the text of the current
    second is formatted once and reused.
    """
    global _second_text
    now = time.time()
    second = int(now)
    if second != _second_text[0]:
        _second_text = (second, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second)))
    return f"{_second_text[1]}{int((now - second) * 1000):03d}Z"


def with_id(raw, entry_id):
    """Splice ``id`` into an encoded envelope as its first field, without re-encoding."""
    if isinstance(entry_id, bytes):
        entry_id = entry_id.decode()
    return b'{"id":"' + entry_id.encode() + b'",' + raw[1:]


def check_topic_prefix(prefix):
    """Raise EnvelopeError unless ``prefix`` is a valid subscription (a topic or ``*``)."""
    if prefix == WILDCARD:
        return
    if not isinstance(prefix, str):
        raise EnvelopeError("topic", "must be a string")
    if not 1 <= len(prefix) <= MAX_TOPIC_CHARS or not TOPIC_RE.match(prefix):
        raise EnvelopeError(
            "topic", "must be '*' or dot-separated segments of [a-z0-9_-], 1-200 characters")


def check_topic_list(topics, most, least=0, field="topics"):
    """Check a list of subscription prefixes; returns it without repeats, in order.

    Raises EnvelopeError with the field ``topics`` or ``topics[i]`` (or
    ``field`` in their place).
    """
    if not isinstance(topics, list) or not least <= len(topics) <= most:
        raise EnvelopeError(field, f"must be a list of {least}-{most} topic prefixes")
    for index, topic in enumerate(topics):
        try:
            check_topic_prefix(topic)
        except EnvelopeError as exc:
            raise EnvelopeError(f"{field}[{index}]", exc.rule) from None
    return list(dict.fromkeys(topics))


def within(allowed, prefix):
    """True when subscription ``prefix`` lies inside one of the ``allowed`` prefixes."""
    if prefix == WILDCARD:
        return WILDCARD in allowed
    return any(topic_matches(limit, prefix) for limit in allowed)


def restrict(subscriptions, allowed):
    """What ``subscriptions`` cover inside ``allowed`` (None: no limit), as prefixes.

    A subscription inside an allowed prefix is kept; an allowed prefix inside
    a subscription stands for the part of it that may be seen:

        >>> restrict(["*", "billing"], ["board.42"])
        ['board.42']
        >>> restrict(["board", "billing"], ["board.42", "ops"])
        ['board.42']
    """
    if allowed is None:
        return list(subscriptions)
    kept = [s for s in subscriptions if within(allowed, s)]
    kept += [a for a in allowed if a not in kept and within(subscriptions, a)]
    return sorted(kept)


def topic_matches(prefix, topic):
    """True when the subscription ``prefix`` covers ``topic`` (segment-wise)."""
    if prefix == WILDCARD or prefix == topic:
        return True
    return topic.startswith(prefix) and topic[len(prefix)] == "."


def topic_prefixes(topic):
    """Every subscription that matches ``topic``: ``*`` and each segment prefix.

        >>> topic_prefixes("spark.job.done")
        ['*', 'spark', 'spark.job', 'spark.job.done']
    """
    parts = topic.split(".")
    return [WILDCARD] + [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def visible_to(user, subscriptions, topic, owner):
    """True when a notification (``topic``, private ``owner`` or None) belongs in ``user``'s feed."""
    if owner:
        return owner == user
    return any(topic_matches(prefix, topic) for prefix in subscriptions)
