"""The notifications a web process delivered lately, in memory: replays read them here.

A reconnect storm is thousands of replays of the same few seconds of
history. Read from Redis, each one cost an XRANGE, the parsing of every
entry, a JSON decode and, through python-socketio's ``emit``, an encode and
a scan of every value for binary data: nearly half of the restarted
process's time (bench/RESULTS.md, "Why the storm was slow"). The relay sees
every notification anyway, in id order, and none twice (app/stream/follow.py
catches up from the stream after any gap), so it keeps the last ones here,
as the JSON it delivered; a replay from an id this window *covers* is
filtered here and sent as that JSON, with no Redis read and no JSON work.

The window is *complete after* ``since``: every notification with an id
greater than ``since`` that the relay has delivered is in it. It starts at
the relay's starting position, filled back from the stream's newest entries
(:meth:`backfill`), and moves as the oldest are let go (at most
``max_entries`` and about ``max_bytes`` of JSON; never more than the stream's
own ``HISTORY_MAX``, so nothing is replayed from here that Redis has
trimmed). An entry deleted from the middle of the stream (``XDEL``, by an
operator: Herald itself only trims) is let go too, before a replay reads the
window (:meth:`agree`): a replay sends exactly what ``GET
/api/notifications?after=`` answers for its cursor. The seam (seam.py) hands
a held connection what arrived during its replay from here too, so holding a
connection costs nothing per notification.
"""
import bisect
import threading

from app.stream.envelope import id_key, with_id
from app.stream.shards import configured as configured_shards
from app.stream.shards import stream_id

MAX_ENTRIES = 10_000
MAX_BYTES = 8 * 1024 * 1024
_NONE = (float("inf"), 0)  # "covers nothing": above every id key

# KEYS: the stream. ARGV: first, last (ids, inclusive), count. The ids (only) of up to
# count entries from first to last: what the stream still holds of a stretch of the
# window, without its envelopes.
_IDS_LUA = """
local rows = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[2], 'COUNT', ARGV[3])
local ids = {}
for i = 1, #rows do ids[i] = rows[i][1] end
return ids
"""
IDS_CHUNK = 1000


class Recent:
    """The window; ``keys[i]`` (an id key) belongs to ``entries[i]`` =
    ``(id, topic, owner, text)``, both in id order from ``start``."""

    def __init__(self, max_entries=MAX_ENTRIES, max_bytes=MAX_BYTES, shard=None):
        """``shard``: the app.stream.shards.Shard whose notifications it keeps (the
        first, by default)."""
        self.shard = shard if shard is not None else configured_shards()[0]
        self.max_entries = max(0, max_entries)
        self.max_bytes = max_bytes
        self.keys = []
        self.entries = []
        self.start = 0  # entries before it were let go (compacted now and then)
        self.bytes = 0
        self.since = _NONE
        self.removed = None  # the stream's removed entries when agree() last found it agreed
        self._agreeing = threading.Lock()  # one check at a time (a storm's replays share it)
        self._ids_script = None  # (client, its registered _IDS_LUA)
        self.began = 0  # how many times the window began (begin)

    def __len__(self):
        return len(self.keys) - self.start

    def covers(self, after):
        """True when every notification delivered with an id past ``after`` (an id
        key) is here."""
        return self.max_entries > 0 and after >= self.since

    def begin(self, position):
        """The relay follows from ``position`` (an id): what comes next is complete."""
        self.keys, self.entries, self.start, self.bytes = [], [], 0, 0
        self.began += 1
        self.removed = None
        self.since = id_key(position) if position else (0, 0)

    def backfill(self, client, position):
        """:meth:`begin` at ``position``, with the stream's newest entries up to it
        read back into the window (one XREVRANGE), so that replays from before the
        process started are covered too."""
        self.begin(position)
        if not position or self.max_entries <= 0:
            return
        rows = client.xrevrange(self.shard.stream, max=stream_id(position), count=self.max_entries)
        rows.reverse()
        if len(rows) == self.max_entries:  # more may precede them: complete after the first
            self.since = id_key(rows[0][0])
        else:
            self.since = (0, 0)
        for entry_id, fields in rows:
            entry_id = self.shard.public(entry_id)
            text = with_id(fields[b"envelope"], entry_id).decode()
            self._add(id_key(entry_id), entry_id, fields[b"topic"].decode(),
                      fields.get(b"user", b"").decode() or None, text)

    def add(self, key, entry_id, topic, owner, text):
        """The relay delivered it (ids only rise; one that does not starts the window
        again from it: the stream was replaced)."""
        if self.max_entries <= 0:
            return
        if len(self.keys) > self.start and key <= self.keys[-1]:
            self.begin(None)
            self.since = key
        elif self.since == _NONE:  # never begun (Redis was away at the start): from here on
            self.since = key
        self._add(key, entry_id, topic, owner, text)

    def _add(self, key, entry_id, topic, owner, text):
        self.keys.append(key)
        self.entries.append((entry_id, topic, owner, text))
        self.bytes += len(text)
        while len(self.keys) - self.start > self.max_entries or (
                self.bytes > self.max_bytes and len(self.keys) - self.start > 1):
            self.since = self.keys[self.start]
            self.bytes -= len(self.entries[self.start][3])
            self.start += 1
        if self.start > 1024 and self.start * 2 > len(self.keys):  # compact, now and then
            del self.keys[:self.start]
            del self.entries[:self.start]
            self.start = 0

    def forget_before(self, first):
        """Let go of what is older than ``first``, the oldest id the stream holds (None:
        it holds nothing), so that nothing is replayed from here that Redis no longer
        has: trimmed, or from a stream replaced since (what is past ``since`` stays
        complete: the stream has nothing else)."""
        if len(self.keys) == self.start:
            return
        if first is None:
            self.start = len(self.keys)
            self.bytes = 0
            return
        floor = id_key(first)
        while self.start < len(self.keys) and self.keys[self.start] < floor:
            self.bytes -= len(self.entries[self.start][3])
            self.start += 1

    def agree(self, client, info):
        """Let go of what was deleted from the stream (XDEL) since the last look, so that
        a replay sends nothing Redis no longer has (``info``: state.stream_info, read
        after :meth:`forget_before` was given its first entry).

        Cheap unless an XDEL reached the window: the stream counts the entries it ever
        removed (``entries-added`` less ``length``; trims and deletions alike) and
        keeps the greatest id XDEL removed. While the count stands still nothing was
        removed; when it moved but that greatest id is older than the window, every
        deletion is (trims from the oldest end were let go by forget_before). Only
        else are the ids in the window's stretch up to that id read (ids alone, a
        thousand a call) and the window's entries missing there let go."""
        if info is None or self.max_entries <= 0:
            return
        removed = info["entries-added"] - info["length"]
        if removed == self.removed:
            return
        with self._agreeing:
            if removed == self.removed:  # checked meanwhile by another replay
                return
            deleted = id_key(info.get("max-deleted-entry-id") or "0-0")
            if len(self.keys) > self.start and deleted >= self.keys[self.start]:
                self._drop_deleted(client, deleted)
            # Recorded only when the window has reached the deletion: an entry the relay
            # has yet to add might be one deleted already (it is looked at again then).
            if len(self.keys) > self.start and deleted <= self.keys[-1] or deleted == (0, 0):
                self.removed = removed

    def _drop_deleted(self, client, deleted):
        """Read the ids the stream holds from the window's oldest entry up to ``deleted``
        (or the window's newest), then let go of the window's entries between them that
        the stream lacks."""
        if self._ids_script is None or self._ids_script[0] is not client:
            self._ids_script = (client, client.register_script(_IDS_LUA))
        script = self._ids_script[1]
        low, high = self.keys[self.start], min(self.keys[-1], deleted)
        began = self.began
        held, start, last = set(), stream_id(self.entries[self.start][0]), f"{high[0]}-{high[1]}"
        while True:
            ids = [self.shard.public(i)
                   for i in script(keys=[self.shard.stream], args=[start, last, IDS_CHUNK])]
            held.update(ids)
            if len(ids) < IDS_CHUNK:
                break
            start = "(" + stream_id(ids[-1])
        if self.began != began:  # begun again meanwhile (another stream): not this one's
            return
        # No I/O from here on. The relay may have added entries meanwhile (all newer than
        # ``high``) or let the oldest go: the window as it is now is filtered.
        keys, entries, size = [], [], 0
        for key, entry in zip(self.keys[self.start:], self.entries[self.start:], strict=True):
            if low <= key <= high and entry[0] not in held:
                continue  # deleted from the stream
            keys.append(key)
            entries.append(entry)
            size += len(entry[3])
        self.keys, self.entries, self.start, self.bytes = keys, entries, 0, size

    def after(self, key):
        """The entries with an id past ``key``, in id order (a new list)."""
        index = bisect.bisect_right(self.keys, key, lo=self.start)
        return self.entries[index:]

    def newest(self):
        """The id of the newest entry, or None."""
        return self.entries[-1][0] if len(self.keys) > self.start else None
