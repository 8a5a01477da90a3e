"""Reading notification history from ``herald:stream``.

A user's feed is what they may see: notifications private to them, and
public ones whose topic matches one of their subscriptions. Filtering uses
the stream entries' ``topic`` and ``user`` fields, so only the entries that
pass are decoded.

Reads report a *cursor*: the id of the last stream entry examined, visible or
not. A client that resumes from the cursor misses nothing and re-reads nothing.
What a read keeps besides visibility (filters, search) is feed_filter.Filter.
"""
import orjson
import redis

from app.redis_client import pool_for, raw_entries, raw_name
from app.stream.envelope import WILDCARD, id_key, visible_to, with_id
from app.stream.filters import EVERYTHING, Filter  # noqa: F401  (Filter: what callers pass in)
from app.stream.keys import BORN
from app.stream.shards import configured as configured_shards

SCAN_CHUNK = 500
LAST_ID = (2**64 - 1, 2**64 - 1)  # the greatest stream id: nothing comes after it


def _shard(shard):
    """``shard``, or the first of the deployment's (the only one, with STREAM_SHARDS=1)."""
    return shard if shard is not None else configured_shards()[0]


def _envelope(entry_id, fields):
    return orjson.loads(with_id(fields[b"envelope"], entry_id))


def _visible(fields, user, subscriptions, entry_id=None, floor=None):
    owner = fields.get(b"user", b"").decode()
    if owner and floor is not None and id_key(entry_id) <= floor:
        return False  # private to this name's previous holder
    return visible_to(user, subscriptions, fields[b"topic"].decode(), owner)


def floor_of(client, user):
    """The born floor of ``user`` (keys.BORN) as an id tuple, or None when there is none.

    Private notifications to ``user`` with an id at or below it are not theirs:
    they were published before this account with the name was created (to a
    deleted account of the same name, say), so no read of history returns them.
    """
    floor = client.get(BORN + user)
    return id_key(floor) if floor else None


def last_generated(client, shard=None):
    """The last id ``shard``'s stream ever generated ("0-0" when it does not exist):
    every later notification there has a greater id."""
    try:
        return client.xinfo_stream(_shard(shard).stream)["last-generated-id"].decode()
    except redis.ResponseError:  # no such key
        return "0-0"


SCAN_FIRST = 200   # entries in a scan's first read (a page of the feed needs no more, mostly)
SCAN_MOST = 5000   # the largest read: a long scan makes few round trips


def _read(client, command, stream, first, last, count):
    """XRANGE or XREVRANGE as Redis answers it: ``[[id, [field, value, ...]], ...]``.

    The command name goes as bytes, so redis-py leaves the reply as its parser
    made it instead of building a tuple and a dict per entry, a third of a long
    scan's time.
    """
    return raw_entries(client, client.execute_command(raw_name(client, command), stream,
                                                      first, last, "COUNT", count))


class _Reads:
    """The reads of one scan, from ``bound`` on (exclusive after the first read).

    The first read is a plain command: most pages need no more. A long scan
    asks for its next read early (:meth:`ask_early`), on a connection of its
    own, before it looks at the read in hand, so that Redis prepares the next
    one meanwhile; :meth:`close` drops that connection when the scan ends with
    a read still coming (cheaper than reading it).
    """

    def __init__(self, client, command, bound, stream):
        self.client, self.command, self.bound, self.stream = client, command, bound, stream
        self.far = "+" if command == "XRANGE" else "-"
        self.connection, self.pending, self.pool = None, None, None

    def _send(self, count):
        if self.connection is None:
            self.pool = pool_for(self.client, self.stream)
            self.connection = self.pool.get_connection()
        self.connection.send_command(self.command, self.stream, self.bound, self.far, "COUNT",
                                     count)

    def read(self, count):
        """``(entries, count asked for)`` of the next read: the one asked for early, or
        one of ``count`` entries."""
        if self.pending is not None:
            entries, count = self.connection.read_response(), self.pending
            self.pending = None
        elif self.connection is None:
            entries = _read(self.client, self.command, self.stream, self.bound, self.far, count)
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
            self.pool.release(self.connection)
            self.connection = None


def _fields(fields):
    """(topic, owner, envelope JSON) of a raw entry: bytes, owner b"" when public."""
    if len(fields) == 6 and fields[0] == b"topic" and fields[4] == b"envelope":
        return fields[1], fields[3], fields[5]  # as bus.py writes them
    named = dict(zip(fields[::2], fields[1::2], strict=False))
    return named[b"topic"], named.get(b"user", b""), named[b"envelope"]


def _next_count(asked, found, examined, limit):
    """How many entries the next read asks for: what the rest of the page should take at
    the rate entries passed so far (and half again), or four times the last read while
    none has passed; from SCAN_FIRST to SCAN_MOST."""
    if not found:
        return min(asked * 4, SCAN_MOST)
    wanted = (limit - found) * examined / found * 1.5
    return int(min(max(wanted, SCAN_FIRST), SCAN_MOST))


def _collect(client, command, user, subscriptions, bound, limit, wanted, shard):
    """Read ``shard``'s stream with ``command`` (XRANGE: forward, XREVRANGE: back) from
    ``bound`` until ``limit`` entries that ``user`` may see pass ``wanted``.

    Returns (found, cursor, more): ``cursor`` is the last entry examined (a stream
    id), ``more`` whether the scan stopped before the end of the stream.
    """
    me = user.encode()
    floor = floor_of(client, user)
    everything = WILDCARD in subscriptions
    exact = frozenset(p.encode() for p in subscriptions if p != WILDCARD)
    under = tuple(p + b"." for p in exact)
    keep = wanted.keep
    found, cursor, examined = [], None, 0
    reads = _Reads(client, command, bound, shard.stream)
    suffix = shard.suffix.encode()
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
                    if owner != me or (floor is not None and id_key(entry_id) <= floor):
                        continue
                elif not (everything or topic in exact or topic.startswith(under)):
                    continue
                envelope = keep(entry_id + suffix if suffix else entry_id, topic, raw,
                                chosen is not None)
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


def feed_after(client, user, subscriptions, after, limit, wanted=EVERYTHING, shard=None):
    """Up to ``limit`` of the user's notifications with id > ``after`` (a stream id) in
    ``shard``, in id order.

    Returns (notifications, cursor); the cursor (a stream id) is ``after`` when nothing
    newer exists.
    """
    if id_key(after) >= LAST_ID:  # nothing can follow; Redis refuses "(" past the end
        return [], after
    found, cursor, _more = _collect(client, "XRANGE", user, subscriptions, f"({after}", limit,
                                    wanted, _shard(shard))
    return found, cursor or after


def feed_latest(client, user, subscriptions, limit, wanted=EVERYTHING, before=None, shard=None):
    """The user's ``limit`` newest notifications in ``shard`` (older than ``before``, a
    stream id, if given), oldest first; the stream's newest id; and where to read on for
    older ones (``before`` of the next page; None when the start of history was reached)."""
    shard = _shard(shard)
    newest = client.xrevrange(shard.stream, count=1)
    if not newest:
        return [], None, None
    end = newest[0][0].decode()
    if before is not None and id_key(before) <= (0, 0):  # nothing precedes it
        return [], end, None
    found, cursor, more = _collect(client, "XREVRANGE", user, subscriptions,
                                   f"({before}" if before else end, limit, wanted, shard)
    found.reverse()
    return found, end, cursor if more else None


def replay(client, user, subscriptions, after, chunk=SCAN_CHUNK, raw=False, shard=None):
    """Yield (visible notifications, cursor) chunk by chunk from ``after`` (a stream id)
    to the end of ``shard``'s stream; with ``raw``, each notification as ``(id, its
    JSON)`` rather than decoded. The cursor is a stream id."""
    if id_key(after) >= LAST_ID:
        return
    shard = _shard(shard)
    start = f"({after}"
    floor = floor_of(client, user)
    while True:
        entries = client.xrange(shard.stream, min=start, max="+", count=chunk)
        if not entries:
            return
        if raw:
            visible = [(shard.public(entry_id), with_id(fields[b"envelope"],
                                                         shard.public(entry_id)).decode())
                       for entry_id, fields in entries
                       if _visible(fields, user, subscriptions, entry_id, floor)]
        else:
            visible = [_envelope(shard.public(entry_id), fields) for entry_id, fields in entries
                       if _visible(fields, user, subscriptions, entry_id, floor)]
        cursor = entries[-1][0].decode()
        yield visible, cursor
        if len(entries) < chunk:
            return
        start = f"({cursor}"


def one(client, user, subscriptions, entry_id):
    """The envelope of notification ``entry_id`` when it is in history and ``user`` may
    see it, else None."""
    shard, at = configured_shards().locate(entry_id)
    entries = client.xrange(shard.stream, min=at, max=at, count=1)
    if not entries or not _visible(entries[0][1], user, subscriptions, entries[0][0],
                                   floor_of(client, user)):
        return None
    return _envelope(shard.public(entries[0][0]), entries[0][1])


def newest_id(client, shard=None):
    """The id of the newest entry in ``shard``'s stream, or "0-0" when it is empty."""
    newest = client.xrevrange(_shard(shard).stream, count=1)
    return newest[0][0].decode() if newest else "0-0"
