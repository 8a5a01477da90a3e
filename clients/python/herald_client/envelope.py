"""Herald's envelope rules, checked where a notification is made (docs/contract.md).

A notification published through the outbox reaches Herald later, from the
relay: a mistake found only then could not be told to the code that made it.
So :func:`check` refuses it at the call, with :class:`InvalidNotification`
naming the field and the rule, as Herald would (Herald checks again: these
rules mirror app/stream/envelope.py, field_rules.py and strict_json.py, with
the same numbers, and never loosen them; tests/unit/clients/test_envelope_rules.py
holds the two to agreeing over a table of values).

``data`` is read as Herald reads it: nested at most 250 deep (counted as
Herald counts, a value inside the innermost object being a level), keys
that are strings, integers within -2**63..2**64-1 (Herald would keep a
bigger one only as a float, changed), no NaN or Infinity (not JSON), valid
Unicode; and sizes are counted as Herald's encoder writes them (compact
UTF-8; a float such as 1e-07 as ``1e-7``, 1e-05 as ``0.00001``), the whole
with the ``severity`` and ``ts`` Herald adds.
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
MAX_DATA_DEPTH = 250  # app/stream/envelope.py MAX_DATA_DEPTH, counted as field_rules.depth
INT_MIN, INT_MAX = -(2**63), 2**64 - 1  # app/stream/strict_json.py: what Herald keeps exactly
MAX_USER_CHARS = 255
MAX_URL_CHARS = 2000
TS_BYTES = len(',"ts":"2026-11-21T18:00:00.123Z"')  # what Herald adds before it counts
_LONG_INT = re.compile(rb"[0-9]{19}")  # a possible integer past 64 bits


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
    extra = 0  # bytes Herald's encoder writes beyond Python's (floats: see module)
    if data is not None:
        if not isinstance(data, dict):
            _refuse("data", "must be a JSON object (a dict)")
        check_data(data)
        encoded, extra = _encoded_as_herald(data, "data", json_default)
        if len(encoded) + extra > MAX_DATA_BYTES:
            _refuse("data", f"must be at most {MAX_DATA_BYTES} bytes encoded")
    stored = {field: value for field, value in envelope.items() if value is not None}
    stored["severity"] = stored.get("severity", "info")
    if stored.get("kind") == "alert":
        del stored["kind"]  # Herald stores an alert without it
    if len(_encoded(stored, "envelope", json_default)) + extra + TS_BYTES > MAX_ENVELOPE_BYTES:
        _refuse("envelope", f"must be at most {MAX_ENVELOPE_BYTES} bytes encoded")
    return envelope


def check_data(data):
    """Refuse ``data`` unless Herald would keep it as it is (see the module): its depth,
    keys, integers, floats and text, naming the place (``data.items[3]``) at fault.
    Level by level, so a value nested 100,000 deep costs 251 levels, never a
    RecursionError. A place is kept as (its parent's place, key or index), and spelt
    out only for a refusal."""
    level, layer = 0, [(None, data)]
    while layer:
        level += 1
        if level > MAX_DATA_DEPTH:
            _refuse("data", f"must be nested at most {MAX_DATA_DEPTH} deep")
        below = []
        for place, value in layer:
            if isinstance(value, dict):
                for key, child in value.items():
                    if not isinstance(key, str):
                        _refuse("data", f"{_spelt(place)} has the key {key!r:.40} "
                                        f"({type(key).__name__}): keys must be strings")
                    _data_text(place, key, "a key in ")
                    below.append(((place, key), child))
            elif isinstance(value, (list, tuple, set, frozenset)):
                below.extend(((place, index), child) for index, child in enumerate(value))
            else:
                _data_value(place, value)
        layer = below


def _spelt(place):
    """``(((None, "a"), 3), "b")`` as ``data.a[3].b``."""
    steps = []
    while place is not None:
        place, step = place
        steps.append(f"[{step}]" if isinstance(step, int) else f".{step[:40]}")
    return "data" + "".join(reversed(steps))


def _data_value(place, value):
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
        _refuse("data", f"{_spelt(place)} is an integer past 64 bits ({str(value)[:20]}...), "
                        "which Herald cannot keep exactly: send it as a string")
    if isinstance(value, float) and not math.isfinite(value):
        _refuse("data", f"{_spelt(place)} is {value}, which is not JSON")
    if isinstance(value, str):
        _data_text(place, value)


def _data_text(place, text, what=""):
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            _refuse("data", f"{what}{_spelt(place)} must be valid Unicode text (a lone "
                            "surrogate such as \\ud800 is not)")


def _encoded(value, field, default):
    try:
        return json.dumps(value, default=default, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
        _refuse(field, f"must be JSON-encodable ({exc})")


def _encoded_as_herald(value, field, default):
    """``value`` as compact JSON, and how many bytes more Herald's encoder (orjson) writes
    for it: the same text but for floats with a negative exponent, whose digits it
    writes alike and whose exponent it writes otherwise (:func:`herald_float`). What
    ``default`` made of a value is checked here too (an integer past 64 bits)."""
    encoded = _encoded(value, field, default)
    extra = []
    if b"e-" in encoded or _LONG_INT.search(encoded):
        def float_text(text):
            extra.append(len(herald_float(text)) - len(text))
            return 0.0

        def int_text(text):
            if not INT_MIN <= int(text) <= INT_MAX:
                _refuse(field, f"holds an integer past 64 bits ({text[:20]}...), which Herald "
                               "cannot keep exactly: send it as a string")
            return 0
        json.loads(encoded, parse_float=float_text, parse_int=int_text)
    return encoded, sum(extra)


def herald_float(text):
    """The float Python writes as ``text`` (repr: ``1e-07``), as Herald's encoder writes it:
    the same shortest digits, a negative exponent without a leading zero (``1e-7``), and
    one of -5 written out (``1.5e-05``: ``0.000015``)."""
    mantissa, marked, exponent = text.partition("e")
    if not marked or not exponent.startswith("-"):
        return text
    if int(exponent) == -5:
        sign, digits = ("-", mantissa[1:]) if mantissa.startswith("-") else ("", mantissa)
        return f"{sign}0.0000{digits.replace('.', '')}"
    return f"{mantissa}e-{int(exponent[1:])}"


URL_RULE = ("must be an absolute http(s):// URL or a path starting with /, "
            f"at most {MAX_URL_CHARS} characters")


def _check_url(url):
    """As Herald's (app/stream/field_rules.check_url): no spaces, no control characters,
    valid Unicode, http(s) with a host or a path of this site (never //host), and a URL
    that does not parse (``http://[::1``) refused as a url, not a ValueError."""
    if url is None:
        return
    if not isinstance(url, str) or not 1 <= len(url) <= MAX_URL_CHARS or CONTROL_RE.search(url) \
            or " " in url:
        _refuse("url", URL_RULE)
    _unicode("url", url)
    if url.startswith("/"):
        if url.startswith("//") or url.startswith("/\\"):
            _refuse("url", URL_RULE + " (not //host, which leaves the site)")
        return
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        _refuse("url", URL_RULE + f"; it is not a valid URL ({exc})")
    if parts.scheme.lower() not in ("http", "https") or not host:
        _refuse("url", URL_RULE)


def is_number(value):
    """True for a finite int or float (not a bool): a job's percent."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
