"""Which of a user's notifications a feed read returns, besides what they may see:
the filters and search of ``GET /api/notifications`` (app/web/api/feed.py), applied
by app/stream/history.py's scans on the stream's raw fields, decoding as little as it can.
"""
from bisect import bisect_right
from itertools import accumulate

import orjson

from app.stream.envelope import DATA_PREFIX, WILDCARD, id_key, with_id

KINDS = ("alert", "data", "all")  # what a read may ask for: ``all`` is both


class Filter:
    """Which of a user's notifications a read returns, besides what they may see.

    ``unread`` (a read state from app.users.read_state.get: only those not read),
    ``severities`` (a set), ``topic`` (a prefix), ``text`` (in the title or body,
    any case), ``hidden``/``only``: the ids archived or snoozed, left out
    (``hidden``) or the only ones wanted (``only``), and ``mutes``: the user's
    rules as app.users.preferences.mute_rules gives them (muted topics are left
    out), and ``kind``: ``alert`` (notifications for people, what the inbox
    shows), ``data`` (records that changed) or ``all`` (both, the default: a
    filter keeps everything it is not told to leave out; the inbox asks for
    ``alert``). All optional.

    A scan of the whole history (a search that matches rarely) looks at every
    entry, so :meth:`keep` decides on the stream's raw fields first and decodes
    the JSON only of entries that may pass (see :meth:`_may_contain`).
    """

    __slots__ = ("unread", "severities", "topic", "text", "hidden", "only", "_hidden", "_only",
                 "_topic", "_under", "_read", "_unread", "_upto", "_marks", "_info", "_raw_text",
                 "_ascii_text", "_mutes", "_muted", "kind", "_data")

    def __init__(self, unread=None, severities=None, topic=None, text=None, hidden=(),
                 only=None, mutes=(), kind="all"):
        if kind not in KINDS:
            raise ValueError(f"kind: must be one of {', '.join(KINDS)}")
        self.kind = kind
        # A data event's stored JSON starts with DATA_PREFIX (app/stream/envelope.py
        # validate puts kind first), an alert's never does: True keeps only data
        # events, False only alerts, None both.
        self._data = None if kind == "all" else kind == "data"
        self.unread, self.severities, self.topic = unread, severities or None, topic
        self.text = text.casefold() if text else None
        self.hidden, self.only = hidden, only
        # The same, as the bytes the stream holds.
        self._hidden = frozenset(i.encode() for i in hidden)
        self._only = None if only is None else frozenset(i.encode() for i in only)
        self._topic = topic.encode() if topic and topic != WILDCARD else None
        self._under = self._topic + b"." if self._topic else None
        if unread is not None:  # sets, not the lists of the read state: one look each
            self._read = frozenset(i.encode() for i in unread["ids"])
            self._unread = frozenset(i.encode() for i in unread["unread"])
            self._upto = id_key(unread["upto"]) if unread["upto"] else None
        # Every stored envelope has "severity":"<name>" (orjson: no spaces); finding
        # none of the wanted ones in the raw JSON rules the entry out.
        self._marks = tuple(b'"severity":"' + s.encode() + b'"' for s in self.severities or ())
        self._info = "info" in (self.severities or ())
        # A search for text the JSON escapes (quotes, backslashes, control characters)
        # is checked on the decoded envelope only.
        self._raw_text = self.text is not None and not any(
            c in '"\\' or c < " " for c in self.text)
        self._ascii_text = self.text.encode() if self.text and self.text.isascii() else None
        self._mutes = tuple((p.encode(), p == WILDCARD, muted) for p, muted in mutes)
        self._muted = {}  # topic (bytes) -> muted: a read meets few topics, many times each

    def is_muted(self, topic):
        """Whether the most specific of the mute rules covering ``topic`` (bytes) mutes it."""
        muted = self._muted.get(topic)
        if muted is None:
            muted = next((m for prefix, every, m in self._mutes
                          if every or topic == prefix or topic.startswith(prefix + b".")), False)
            self._muted[topic] = muted
        return muted

    def _is_read(self, entry_id):
        if entry_id in self._read:
            return True
        return (self._upto is not None and entry_id not in self._unread
                and id_key(entry_id) <= self._upto)

    def _may_contain(self, raw):
        """False when the envelope's JSON cannot hold the text in its title or body.

        orjson writes text as it is except ``"``, ``\\`` and control characters
        (escaped), none of which are in the text here; case folding maps each
        character on its own. So a title or body holding the text (folded) leaves
        it in the folded JSON too, and an ASCII JSON folds by ``bytes.lower``.
        """
        if b"\\u" in raw:  # an escape orjson does not write for text: decide on the decoded
            return True
        if raw.isascii():
            return self._ascii_text is not None and self._ascii_text in raw.lower()
        return self.text in raw.decode().casefold()

    def candidates(self, raws):
        """The indexes (in order) of the envelope JSONs in ``raws`` that may hold the
        text, found for a whole read at once; None when there is no such shortcut.

        The JSONs are joined (none holds a raw newline: JSON escapes it) and
        folded by one ``bytes.lower``; each hit names its entry. Entries whose
        JSON is not ASCII (or holds a ``\\u`` escape) are looked at one by one.
        """
        if not self._raw_text:
            return None
        joined = b"\n".join(raws)
        hits = set()
        if self._ascii_text is not None:
            starts = list(accumulate((len(raw) + 1 for raw in raws), initial=0))
            find, needle = joined.lower().find, self._ascii_text
            at = find(needle)
            while at != -1:
                index = bisect_right(starts, at) - 1
                hits.add(index)
                at = find(needle, starts[index + 1])
        if not joined.isascii() or b"\\u" in joined:
            for index, raw in enumerate(raws):
                if index not in hits and (not raw.isascii() or b"\\u" in raw) \
                        and self._may_contain(raw):
                    hits.add(index)
        return sorted(hits)

    def keep(self, entry_id, topic, raw, may_contain=False):
        """The envelope when the entry (its id, topic and JSON as the stream holds them,
        bytes) passes, else None. ``may_contain``: :meth:`candidates` chose it."""
        if self._data is not None and raw.startswith(DATA_PREFIX) is not self._data:
            return None
        if self._only is not None and entry_id not in self._only:
            return None
        if entry_id in self._hidden:
            return None
        if self._topic is not None and topic != self._topic and not topic.startswith(self._under):
            return None
        if self._mutes and self.is_muted(topic) and not raw.startswith(DATA_PREFIX):
            return None  # a mute quiets what people are told, never a page's live records
        if self.unread is not None and self._is_read(entry_id):
            return None
        if self._marks and not any(mark in raw for mark in self._marks) \
                and not (self._info and b'"severity":"' not in raw):
            return None
        if self._raw_text and not may_contain and not self._may_contain(raw):
            return None
        envelope = orjson.loads(with_id(raw, entry_id))
        if self.severities and envelope.get("severity", "info") not in self.severities:
            return None
        if self.text and self.text not in envelope["title"].casefold() \
                and self.text not in envelope.get("body", "").casefold():
            return None
        return envelope


EVERYTHING = Filter()
