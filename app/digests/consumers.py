"""The digest workers' consumer group: who is who, what a dead one left, tidying up.

Any number of digest workers read the history (``herald:stream``) as the one
consumer group ``herald:digests``, each under a name of its own (``DIGEST_CONSUMER``, by
default ``digest-<host>-<pid>``), so Redis hands each new entry to exactly one
of them. An entry a worker has read but not collected (it died, or lost
Redis mid-batch) stays *pending* under its name; once it has been idle
``DIGEST_CLAIM_IDLE`` seconds (default 30) any worker takes it over with
``XAUTOCLAIM`` and collects it. A slow owner that is still alive may collect
it too: the collected marker (collect.py) makes the second time a no-op.

A new pid is a new consumer name, so every restart leaves a name behind;
:func:`forget_stale` deletes those with nothing pending that have been idle
for ``STALE_AFTER`` seconds, atomically (a consumer that read something
meanwhile is kept, or its pending entries would be lost with it).

With a sharded history (``STREAM_SHARDS=N``: app/stream/shards.py) the group is
one per shard's stream (app/stream/groups.py), and so are a consumer's pending
entries: the takeover goes through each shard's pending entries in turn, one
``XAUTOCLAIM`` (with a cursor of its own) per shard, handing entries on under
their notification ids; the tidying runs its script in each shard (a consumer
name is deleted in a shard where it holds nothing, kept where it does).
"""
import os
import re
import socket

from app.digests import store
from app.settings import get
from app.stream import groups
from app.stream.shards import configured as configured_shards

GROUP = store.GROUP
DEFAULT_CLAIM_IDLE = 30.0
STALE_AFTER = 3600.0  # seconds idle, with nothing pending, before a consumer name is deleted
NAME_RE = re.compile(r"[A-Za-z0-9_.:@-]{1,200}\Z")

# KEYS: a shard's stream. ARGV: group, our name, idle ms. Deletes the consumers other than us
# with nothing pending, idle longer than that; returns {our pending, deleted names...}.
# No stream (deleted, not yet made again): nothing to tidy (XINFO would raise "no such key";
# a missing group raises NOGROUP, for the caller to remake it: groups.Reader.regrouped).
_FORGET_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
local mine = 0
local deleted = {}
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for i = 1, #consumer, 2 do info[consumer[i]] = consumer[i + 1] end
  if info['name'] == ARGV[2] then
    mine = info['pending']
  elseif info['pending'] == 0 and info['idle'] > tonumber(ARGV[3]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    deleted[#deleted + 1] = info['name']
  end
end
return {mine, unpack(deleted)}
"""


def consumer_name():
    """``DIGEST_CONSUMER``, or ``digest-<host>-<pid>``: unique per worker process."""
    raw = get("DIGEST_CONSUMER")
    if not raw:
        return f"digest-{socket.gethostname()}-{os.getpid()}"
    if not NAME_RE.match(raw):
        raise SystemExit("herald: DIGEST_CONSUMER must be 1 to 200 letters, digits and . _ : @ -, "
                         f"not {raw!r}")
    return raw


def claim_idle():
    """``DIGEST_CLAIM_IDLE``: seconds an entry stays pending under a silent worker
    before another takes it over (default 30)."""
    return get("DIGEST_CLAIM_IDLE")


class Claimer:
    """Takes over, for consumer ``name``, entries idle longer than ``idle`` seconds, in
    every shard (``shards``: the deployment's by default)."""

    def __init__(self, client, name, idle, shards=None):
        self.client, self.name, self.idle_ms = client, name, int(idle * 1000)
        self.shards = shards or configured_shards()
        self.restart()
        self.forget = client.register_script(_FORGET_LUA)

    def restart(self):
        """Start the scan again, from the first shard's first pending entry."""
        self.cursors, self.turn = ["0-0"] * len(self.shards), 0

    @property
    def cursor(self):
        """Where the scan is in the shard it is in."""
        return self.cursors[self.turn]

    def claim(self, count):
        """One step of XAUTOCLAIM through the pending entries; ``(entries, deleted ids,
        done)``, ``done`` once the scan has gone round (then it starts again). Ids are
        notification ids. A shard whose scan ends with nothing to take over hands on to
        the next within the same step."""
        while True:
            shard = self.shards[self.turn]
            with groups.in_shard(shard):
                reply = self.client.xautoclaim(shard.stream, GROUP, self.name, self.idle_ms,
                                               start_id=self.cursors[self.turn], count=count)
            cursor, entries = reply[0], reply[1]
            deleted = reply[2] if len(reply) > 2 else []  # trimmed away: Redis dropped them
            cursor = cursor.decode() if isinstance(cursor, bytes) else cursor
            self.cursors[self.turn] = cursor
            if shard.index:  # a notification id names its shard (shards.Shard.public)
                entries = [(shard.public(entry_id).encode(), fields) for entry_id, fields in entries]
                deleted = [shard.public(entry_id).encode() for entry_id in deleted]
            if cursor != "0-0":
                return entries, deleted, False
            self.turn = (self.turn + 1) % len(self.shards)
            if entries or deleted or self.turn == 0:
                return entries, deleted, self.turn == 0

    def forget_stale(self, idle=STALE_AFTER):
        """Delete stale consumer names (see the module doc), in every shard; ``(our pending,
        deleted)``: our pending entries over the shards, the names deleted in any."""
        mine, deleted = 0, []
        for shard in self.shards:
            with groups.in_shard(shard):
                pending, *names = self.forget(keys=[shard.stream],
                                              args=[GROUP, self.name, int(idle * 1000)])
            mine += int(pending)
            for name in names:
                name = name.decode() if isinstance(name, bytes) else name
                if name not in deleted:
                    deleted.append(name)
        return mine, deleted
