"""Rules for one field's value, shared by the envelope's checks (app/stream/envelope.py).

Each raises EnvelopeError naming the field, and each is total: whatever the
value, the answer is a pass or an EnvelopeError, never a ValueError from a
parser underneath (``urlsplit("http://[::1")`` raises one, and once took the
ZeroMQ bridge down with it).
"""
import re
from urllib.parse import urlsplit

from app.stream.shards import MAX_SHARDS, SEPARATOR, configured

MAX_URL_CHARS = 2000
MAX_USER_CHARS = 255
# Control characters (C0, DEL, C1).
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class EnvelopeError(ValueError):
    """An envelope broke a rule; ``field`` names it, ``str(e)`` explains."""

    def __init__(self, field, rule):
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


def check_unicode(field, value):
    """Refuse a lone surrogate (``"\\ud800"``): valid in a Python str, never in UTF-8."""
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            raise EnvelopeError(field, "must be valid Unicode text (a lone surrogate "
                                       "such as \\ud800 is not)") from None


def depth(value, most, budget=None):
    """How deep ``value`` nests, counting no further than ``most + 1``: ``{"a": 1}`` is 2.

    Level by level, never recursing; a tuple counts as the list orjson writes. With
    ``budget``, at most that many values are walked, and past it the answer is None:
    a value of more items than fit in ``budget`` bytes encoded (one object shared at
    every level of a Python value is otherwise walked once per path to it, 2**60
    times for 60 levels).
    """
    level, layer, walked = 0, [value], 0
    while layer and level <= most:
        level += 1
        walked += len(layer)
        if budget is not None and walked > budget:
            return None
        layer = [child for item in layer if isinstance(item, (dict, list, tuple))
                 for child in (item.values() if isinstance(item, dict) else item)]
    return level


URL_RULE = ("must be an absolute http(s):// URL or a path starting with /, "
            f"at most {MAX_URL_CHARS} characters")


def check_url(url):
    """``url``: where a notification leads. Only ``http://``, ``https://`` (with a
    host) or a path on this site: never ``javascript:``, ``data:`` or ``//host``."""
    if url is None:
        return
    if not isinstance(url, str) or not 1 <= len(url) <= MAX_URL_CHARS or CONTROL_RE.search(url) \
            or " " in url:
        raise EnvelopeError("url", URL_RULE)
    check_unicode("url", url)
    if url.startswith("/"):
        if url.startswith("//") or url.startswith("/\\"):
            raise EnvelopeError("url", URL_RULE + " (not //host, which leaves the site)")
        return
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:  # e.g. "http://[::1": an unclosed IPv6 bracket
        raise EnvelopeError("url", URL_RULE + f"; it is not a valid URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise EnvelopeError("url", URL_RULE + f"; {parts.scheme or 'that'}: is not allowed")
    if not host:
        raise EnvelopeError("url", URL_RULE + "; it names no host")


USER_ID_RULE = (f"must be a string of 1-{MAX_USER_CHARS} characters: the user's id "
                "(any text, e.g. the host app's primary key)")


def check_user_id(value, field="user"):
    """Raise EnvelopeError unless ``value`` is a user id: any valid Unicode string of
    1-255 characters, control characters and all.

    A user id is opaque to Herald: the host app's id of its user (``42``,
    ``user:42``, ``alice@example.com``, a UUID, ``Zoë Müller``), compared
    exactly (no case folding, no Unicode normalisation). Herald's own account
    names are stricter (app/users/accounts.py), and are user ids too.

        >>> check_user_id("user:42")
        'user:42'
    """
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_USER_CHARS:
        raise EnvelopeError(field, USER_ID_RULE)
    check_unicode(field, value)
    return value


STREAM_ID_RE = re.compile(r"[0-9]{1,20}-[0-9]{1,20}\Z")  # ASCII digits: \d takes any script's
STREAM_ID_PART_MAX = 2**64 - 1  # each half of a Redis stream id is an unsigned 64-bit number


def id_key(entry_id):
    """A notification id (``"<ms>-<seq>"``, or ``"<ms>-<seq>-<shard>"`` in a sharded
    history: app/stream/shards.py; str or bytes) as a tuple that sorts like its shard's
    stream: ``(ms, seq)``, the shard left out (within a shard every id has the same, and
    between shards there is no order but time)."""
    if isinstance(entry_id, bytes):
        entry_id = entry_id.decode()
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq.partition("-")[0] or 0)


CURSOR_RULE = ("must be a cursor as Herald gave it (a notification id like 1700000000000-0, "
               "or ids joined by _), or 0 for the start of history")


def check_cursor(value, field="last_id"):
    """A resume point: a cursor as Herald gives it (app/stream/shards.py: a stream id,
    or one per shard joined by ``_``), a notification id, or ``"0"`` for the start of
    history (Redis' own convention), which is answered as ``"0-0"``. Raises
    EnvelopeError otherwise."""
    if value in ("0", "0-0"):
        return "0-0"
    parts = value.split(SEPARATOR) if isinstance(value, str) else [None]
    if len(parts) > MAX_SHARDS or not all(isinstance(p, str) and NOTIFICATION_ID_RE.match(p)
                                          for p in parts) \
            or (len(parts) > 1 and (configured().count == 1 or any(p.count("-") > 1 for p in parts))) \
            or max(int(n) for p in parts for n in p.split("-")) > STREAM_ID_PART_MAX \
            or parts[0].count("-") == 2 and not 0 < int(parts[0].rpartition("-")[2]) < configured().count:
        raise EnvelopeError(field, CURSOR_RULE)
    return value


NOTIFICATION_ID_RE = re.compile(r"[0-9]{1,20}-[0-9]{1,20}(-[0-9]{1,2})?\Z")


def check_stream_id(value, field="last_id"):
    """Return ``value`` if it is a notification id (``"<ms>-<seq>"``, or
    ``"<ms>-<seq>-<shard>"`` for a shard of this deployment's: app/stream/shards.py),
    else raise EnvelopeError."""
    if (not isinstance(value, str) or not NOTIFICATION_ID_RE.match(value)
            or max(map(int, value.split("-")[:2])) > STREAM_ID_PART_MAX
            or value.count("-") == 2 and not 0 < int(value.rpartition("-")[2]) < configured().count):
        raise EnvelopeError(field, "must be a notification id like 1700000000000-0")
    return value
