"""The digest workers' consumer group: who is who, what a dead one left, tidying up.

Any number of digest workers read ``herald:stream`` as the one consumer group
``herald:digests``, each under a name of its own (``DIGEST_CONSUMER``, by
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
"""
import os
import re
import socket

from app.digests import store
from app.settings import get
from app.stream.keys import STREAM

GROUP = store.GROUP
DEFAULT_CLAIM_IDLE = 30.0
STALE_AFTER = 3600.0  # seconds idle, with nothing pending, before a consumer name is deleted
NAME_RE = re.compile(r"[A-Za-z0-9_.:@-]{1,200}\Z")

# KEYS: stream. ARGV: group, our name, idle ms. Deletes the consumers other than us
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
    """Takes over, for consumer ``name``, entries idle longer than ``idle`` seconds."""

    def __init__(self, client, name, idle):
        self.client, self.name, self.idle_ms = client, name, int(idle * 1000)
        self.cursor = "0-0"
        self.forget = client.register_script(_FORGET_LUA)

    def claim(self, count):
        """One step of XAUTOCLAIM through the pending entries; ``(entries, deleted ids,
        done)``, ``done`` once the scan has gone round (then it starts again)."""
        reply = self.client.xautoclaim(STREAM, GROUP, self.name, self.idle_ms,
                                       start_id=self.cursor, count=count)
        cursor, entries = reply[0], reply[1]
        deleted = reply[2] if len(reply) > 2 else []  # trimmed away: Redis dropped them
        self.cursor = cursor.decode() if isinstance(cursor, bytes) else cursor
        return entries, deleted, self.cursor == "0-0"

    def forget_stale(self, idle=STALE_AFTER):
        """Delete stale consumer names (see the module doc); ``(our pending, deleted)``."""
        mine, *deleted = self.forget(keys=[STREAM], args=[GROUP, self.name, int(idle * 1000)])
        return int(mine), [d.decode() if isinstance(d, bytes) else d for d in deleted]
