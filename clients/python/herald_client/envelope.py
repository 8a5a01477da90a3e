"""Herald's envelope rules, checked where a notification is made (docs/contract.md).

A notification published through the outbox reaches Herald later, from the
relay: a mistake found only then could not be told to the code that made it.
So :func:`check` refuses it at the call, with :class:`InvalidNotification`
naming the field and the rule, as Herald would (Herald checks again: these
rules mirror app/stream/envelope.py, never loosen it).
"""
import json
import math
import re
from urllib.parse import urlsplit

from .errors import InvalidNotification

FIELDS = ("topic", "title", "body", "severity", "data", "user", "origin", "correlation_id",
          "url", "kind")
SEVERITIES = ("info", "success", "warning", "error", "critical")
TOPIC_RE = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\Z")
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
BODY_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
ORIGIN_RE = re.compile(r"[0-9a-fA-F]{1,64}\Z")
MAX_DATA_BYTES = 16 * 1024
MAX_ENVELOPE_BYTES = 64 * 1024
MAX_USER_CHARS = 255
MAX_URL_CHARS = 2000


def _refuse(field, rule):
    raise InvalidNotification(f"{field}: {rule}", 400, field)


def _text(envelope, field, most, control, required=False):
    value = envelope.get(field)
    if value is None:
        if required:
            _refuse(field, "is required")
        return
    if not isinstance(value, str):
        _refuse(field, "must be a string")
    if not 1 <= len(value) <= most:
        _refuse(field, f"must be 1-{most} characters")
    if control.search(value):
        _refuse(field, "must be plain text without control characters")
    _unicode(field, value)


def _unicode(field, value):
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        _refuse(field, "must be valid Unicode (no lone surrogates)")


def user_id(value):
    """A user id as Herald takes it: an int (a primary key) becomes its digits."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def check(envelope, json_default=None):
    """Refuse ``envelope`` (a dict) as Herald would; returns it, with an int ``user``
    (a primary key) as its digits."""
    if "user" in envelope:
        envelope = dict(envelope, user=user_id(envelope["user"]))
    for field in envelope:
        if field in ("id", "ts"):
            _refuse(field, "is set by Herald and must not be sent")
        if field not in FIELDS:
            _refuse(str(field)[:100], "is not a known field")
    topic = envelope.get("topic")
    if not isinstance(topic, str) or not 1 <= len(topic) <= 200 or not TOPIC_RE.match(topic):
        _refuse("topic", "must be 1-200 characters of dot-separated segments of [a-z0-9_-], "
                         "e.g. board.card.updated")
    _text(envelope, "title", 200, CONTROL_RE, required=True)
    _text(envelope, "body", 4000, BODY_CONTROL_RE)
    _text(envelope, "correlation_id", 128, CONTROL_RE)
    if envelope.get("severity", "info") not in SEVERITIES:
        _refuse("severity", "must be one of " + ", ".join(SEVERITIES))
    if envelope.get("kind", "alert") not in ("alert", "data"):
        _refuse("kind", "must be alert or data")
    user = envelope.get("user")
    if user is not None:
        if not isinstance(user, str) or not 1 <= len(user) <= MAX_USER_CHARS:
            _refuse("user", f"must be a user id: a string of 1-{MAX_USER_CHARS} characters")
        _unicode("user", user)
    origin = envelope.get("origin")
    if origin is not None and not (isinstance(origin, str) and ORIGIN_RE.match(origin)):
        _refuse("origin", "must be a hex string of 1-64 characters")
    _check_url(envelope.get("url"))
    data = envelope.get("data")
    if data is not None:
        if not isinstance(data, dict):
            _refuse("data", "must be a JSON object (a dict)")
        if len(_encoded(data, "data", json_default)) > MAX_DATA_BYTES:
            _refuse("data", f"must be at most {MAX_DATA_BYTES} bytes encoded")
    if len(_encoded(envelope, "envelope", json_default)) > MAX_ENVELOPE_BYTES:
        _refuse("envelope", f"must be at most {MAX_ENVELOPE_BYTES} bytes encoded")
    return envelope


def _encoded(value, field, default):
    try:
        return json.dumps(value, default=default, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        _refuse(field, f"must be JSON-encodable ({exc})")


def _check_url(url):
    if url is None:
        return
    if not isinstance(url, str) or not 1 <= len(url) <= MAX_URL_CHARS or CONTROL_RE.search(url):
        _refuse("url", f"must be 1-{MAX_URL_CHARS} characters without control characters")
    if url.startswith("/") and not url.startswith("//") and "\\" not in url[:2]:
        return
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        _refuse("url", "must be an absolute http(s):// URL or a path starting with /")


def is_number(value):
    """True for a finite int or float (not a bool): a job's percent."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
