"""Reading notification history from ``herald:stream``.

A user's feed is what they may see: notifications private to them, and
public ones whose topic matches one of their subscriptions. Filtering uses
the stream entries' ``topic`` and ``user`` fields, so only the entries that
pass are decoded.

Reads report a *cursor*: the id of the last stream entry examined, visible or
not. A client that resumes from the cursor misses nothing and re-reads nothing.
"""
from bisect import bisect_right
from itertools import accumulate

import orjson
import redis

from .bus import EPOCH, STREAM
from .notifications import WILDCARD, id_key, visible_to, with_id

SCAN_CHUNK = 500
LAST_ID = (2**64 - 1, 2**64 - 1)  # the greatest stream id: nothing comes after it


def _envelope(entry_id, fields):
    return orjson.loads(with_id(fields[b"envelope"], entry_id))


def _visible(fields, user, subscriptions):
    owner = fields.get(b"user", b"").decode()
    return visible_to(user, subscriptions, fields[b"topic"].decode(), owner)


class Filter:
    """Which of a user's notifications a read returns, besides what they may see.

    ``unread`` (a read state from app.read_state.get: only those not read),
    ``severities`` (a set), ``topic`` (a prefix), ``text`` (in the title or body,
    any case), and ``hidden``/``only``: the ids archived or snoozed, left out
    (``hidden``) or the only ones wanted (``only``). All optional.

    A scan of the whole history (a search that matches rarely) looks at every
    entry, so :meth:`keep` decides on the stream's raw fields first and decodes
    the JSON only of entries that may pass (see :meth:`_may_contain`).
    """

    __slots__ = ("unread", "severities", "topic", "text", "hidden", "only", "_hidden", "_only",
                 "_topic", "_under", "_read", "_unread", "_upto", "_marks", "_info", "_raw_text",
                 "_ascii_text")

    def __init__(self, unread=None, severities=None, topic=None, text=None, hidden=(),
                 only=None):
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
        if self._only is not None and entry_id not in self._only:
            return None
        if entry_id in self._hidden:
            return None
        if self._topic is not None and topic != self._topic and not topic.startswith(self._under):
            return None
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

SCAN_FIRST = 200   # entries in a scan's first read (a page of the feed needs no more, mostly)
SCAN_MOST = 5000   # the largest read: a long scan makes few round trips


def _read(client, command, first, last, count):
    """XRANGE or XREVRANGE as Redis answers it: ``[[id, [field, value, ...]], ...]``.

    The command name goes as bytes, so redis-py leaves the reply as its parser
    made it instead of building a tuple and a dict per entry, a third of a long
    scan's time.
    """
    return client.execute_command(command, STREAM, first, last, "COUNT", count)


class _Reads:
    """The reads of one scan, from ``bound`` on (exclusive after the first read).

    The first read is a plain command: most pages need no more. A long scan
    asks for its next read early (:meth:`ask_early`), on a connection of its
    own, before it looks at the read in hand, so that Redis prepares the next
    one meanwhile; :meth:`close` drops that connection when the scan ends with
    a read still coming (cheaper than reading it).
    """

    def __init__(self, client, command, bound):
        self.client, self.command, self.bound = client, command, bound
        self.far = "+" if command == b"XRANGE" else "-"
        self.connection, self.pending = None, None

    def _send(self, count):
        if self.connection is None:
            self.connection = self.client.connection_pool.get_connection()
        self.connection.send_command(self.command, STREAM, self.bound, self.far, "COUNT", count)

    def read(self, count):
        """``(entries, count asked for)`` of the next read: the one asked for early, or
        one of ``count`` entries."""
        if self.pending is not None:
            entries, count = self.connection.read_response(), self.pending
            self.pending = None
        elif self.connection is None:
            entries = _read(self.client, self.command, self.bound, self.far, count)
        else:
            self._send(count)
            entries = self.connection.read_response()
        if entries:
            self.bound = b"(" + entries[-1][0]
        return entries, count

    def ask_early(self, count):
        """Ask for the next read, of ``count`` entries, now."""
        self._send(count)
        self.pending = count

    def close(self, failed=False):
        if self.connection is not None:
            if failed or self.pending is not None:
                self.connection.disconnect()
            self.client.connection_pool.release(self.connection)
            self.connection = None


def _fields(fields):
    """(topic, owner, envelope JSON) of a raw entry: bytes, owner b"" when public."""
    if len(fields) == 6 and fields[0] == b"topic" and fields[4] == b"envelope":
        return fields[1], fields[3], fields[5]  # as bus.py writes them
    named = dict(zip(fields[::2], fields[1::2]))
    return named[b"topic"], named.get(b"user", b""), named[b"envelope"]


def _next_count(asked, found, examined, limit):
    """How many entries the next read asks for: what the rest of the page should take at
    the rate entries passed so far (and half again), or four times the last read while
    none has passed; from SCAN_FIRST to SCAN_MOST."""
    if not found:
        return min(asked * 4, SCAN_MOST)
    wanted = (limit - found) * examined / found * 1.5
    return int(min(max(wanted, SCAN_FIRST), SCAN_MOST))


def _collect(client, command, user, subscriptions, bound, limit, wanted=EVERYTHING):
    """Read the stream with ``command`` (XRANGE: forward, XREVRANGE: back) from
    ``bound`` until ``limit`` entries that ``user`` may see pass ``wanted``.

    Returns (found, cursor, more): ``cursor`` is the last entry examined,
    ``more`` whether the scan stopped before the end of the stream.
    """
    me = user.encode()
    everything = WILDCARD in subscriptions
    exact = frozenset(p.encode() for p in subscriptions if p != WILDCARD)
    under = tuple(p + b"." for p in exact)
    keep = wanted.keep
    found, cursor, examined = [], None, 0
    reads = _Reads(client, command, bound)
    count = min(max(2 * limit, SCAN_FIRST), SCAN_MOST)
    try:
        while True:
            entries, asked = reads.read(count)
            # Ask for the next read before looking at this one, unless this one will
            # likely fill the page (at twice the rate at which entries passed so far).
            early = len(entries) == asked and examined \
                and len(found) + 2 * len(entries) * len(found) / examined < limit
            if early:
                reads.ask_early(min(asked * 4, SCAN_MOST))
            examined += len(entries)
            # A search looks at the whole read at once, then at the entries it may match.
            chosen = wanted.candidates([f[5] if len(f) == 6 and f[4] == b"envelope"
                                        else _fields(f)[2] for _, f in entries])
            for index in range(len(entries)) if chosen is None else chosen:
                entry_id, fields = entries[index]
                topic, owner, raw = _fields(fields)
                if owner:
                    if owner != me:
                        continue
                elif not (everything or topic in exact or topic.startswith(under)):
                    continue
                envelope = keep(entry_id, topic, raw, chosen is not None)
                if envelope is not None:
                    found.append(envelope)
                    if len(found) == limit:
                        more = index < len(entries) - 1 or len(entries) == asked
                        return found, entry_id.decode(), more
            if entries:
                cursor = entries[-1][0].decode()
            if len(entries) < asked:
                return found, cursor, False
            count = _next_count(asked, len(found), examined, limit)
    except BaseException:
        reads.close(failed=True)
        raise
    finally:
        reads.close()


def feed_after(client, user, subscriptions, after, limit, wanted=EVERYTHING):
    """Up to ``limit`` of the user's notifications with id > ``after``, in id order.

    Returns (notifications, cursor); the cursor is ``after`` when nothing newer exists.
    """
    if id_key(after) >= LAST_ID:  # nothing can follow; Redis refuses "(" past the end
        return [], after
    found, cursor, _more = _collect(client, b"XRANGE", user, subscriptions, f"({after}", limit,
                                    wanted)
    return found, cursor or after


def feed_latest(client, user, subscriptions, limit, wanted=EVERYTHING, before=None):
    """The user's ``limit`` newest notifications (older than ``before``, if given),
    oldest first; the stream's newest id; and where to read on for older ones
    (``before`` of the next page; None when the start of history was reached)."""
    newest = client.xrevrange(STREAM, count=1)
    if not newest:
        return [], None, None
    end = newest[0][0].decode()
    if before is not None and id_key(before) <= (0, 0):  # nothing precedes it
        return [], end, None
    found, cursor, more = _collect(client, b"XREVRANGE", user, subscriptions,
                                   f"({before}" if before else end, limit, wanted)
    found.reverse()
    return found, end, cursor if more else None


def replay(client, user, subscriptions, after, chunk=SCAN_CHUNK):
    """Yield (visible notifications, cursor) chunk by chunk from ``after`` to the stream's end."""
    if id_key(after) >= LAST_ID:
        return
    start = f"({after}"
    while True:
        entries = client.xrange(STREAM, min=start, max="+", count=chunk)
        if not entries:
            return
        visible = [_envelope(entry_id, fields) for entry_id, fields in entries
                   if _visible(fields, user, subscriptions)]
        cursor = entries[-1][0].decode()
        yield visible, cursor
        if len(entries) < chunk:
            return
        start = f"({cursor}"


def one(client, user, subscriptions, entry_id):
    """The envelope of ``entry_id`` when it is in history and ``user`` may see it, else None."""
    entries = client.xrange(STREAM, min=entry_id, max=entry_id, count=1)
    if not entries or not _visible(entries[0][1], user, subscriptions):
        return None
    return _envelope(*entries[0])


def newest_id(client):
    """The id of the newest entry in the stream, or "0-0" when it is empty."""
    newest = client.xrevrange(STREAM, count=1)
    return newest[0][0].decode() if newest else "0-0"


def missed_history(client, last_id):
    """True when notifications after ``last_id`` may have been trimmed away (or lost).

    Trimming removes the oldest entries, so that is the case when ``last_id``
    is older than the first retained entry and something was ever removed;
    and when ``last_id`` is newer than anything the stream ever generated
    (Redis lost its data), the client's picture cannot be repaired by replay.
    So too when ``last_id`` is older than the stream's epoch (its first entry
    ever, see app/bus.py): it comes from a stream deleted or replaced since.
    """
    try:
        info = client.xinfo_stream(STREAM)
    except redis.ResponseError:  # no such key: nothing was ever published
        return id_key(last_id) > (0, 0)
    if id_key(last_id) > id_key(info["last-generated-id"]):
        return True
    epoch = client.get(EPOCH)
    if epoch and (0, 0) < id_key(last_id) < id_key(epoch.decode()):
        return True
    first = info.get("first-entry")
    if not first:
        return info["entries-added"] > 0 and id_key(last_id) < id_key(info["last-generated-id"])
    return info["entries-added"] > info["length"] and id_key(last_id) < id_key(first[0])
