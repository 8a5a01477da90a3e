"""Dispatching: each notification of ``herald:stream`` into every matching endpoint's queue.

The worker reads the stream as the consumer group ``herald:webhooks``. For
each entry, one Lua script pushes it onto the queue of every endpoint that
wants it (and still exists) and acknowledges it: all of it happens or none,
so after a crash an entry is either queued everywhere and acknowledged, or
still pending (read again on restart), never queued twice nor lost. The
script queues nothing for an entry no longer pending, so a second dispatch
of one entry (two workers, one paused past its lease) is a no-op. One worker
dispatches at a time (the lease in worker.py), under the fixed consumer name
``webhook-worker``, so the one that takes over reads what its predecessor
left pending first, and each endpoint's queue stays in id order.

An endpoint whose queue is full (WEBHOOK_QUEUE_MAX) gets the notification
parked instead (parking.py).

An endpoint gets what was published after it was registered, never older
entries (the worker may be behind when an endpoint is added).
"""
import logging
import time

import orjson
import redis

from app.stream import groups
from app.stream.envelope import id_key, with_id
from app.stream.keys import METRICS_WORKERS, STREAM
from app.webhooks import parking, store

log = logging.getLogger("herald.webhooks")

CONSUMER = "webhook-worker"
READ_COUNT = 200

# KEYS: stream, then n endpoint keys, their n queues, n parked lists, n stats, then the
# worker figures. ARGV: group, entry id, item, queue max, parked max, now, then the n
# delivery ids. Queues the item for each endpoint that still exists (or parks it when that
# endpoint's queue is full: parking.py), then XACKs; nothing when the entry is no longer
# pending (already dispatched: by a worker that was paused past its lease, say), so
# dispatching an entry twice queues it once.
_FAN_OUT_LUA = parking.PARK_LUA + """
if #redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1) == 0 then return {} end
local n = (#KEYS - 2) / 4
local figures = KEYS[#KEYS]
local queued = {}
for i = 1, n do
  if redis.call('EXISTS', KEYS[1 + i]) == 1 then
    if redis.call('LLEN', KEYS[1 + n + i]) < tonumber(ARGV[4]) then
      redis.call('RPUSH', KEYS[1 + n + i], ARGV[3])
      queued[#queued + 1] = i
    else
      local record = cjson.encode({delivery = ARGV[6 + i], notification = ARGV[2],
        attempts = 0, error = 'not queued: the queue was full (WEBHOOK_QUEUE_MAX)',
        parked_at = tonumber(ARGV[6]), body = string.sub(ARGV[3], #ARGV[2] + 2)})
      park(KEYS[1 + 2 * n + i], KEYS[1 + 3 * n + i], figures, record, ARGV[5])
      redis.call('HINCRBY', KEYS[1 + 3 * n + i], 'overflowed', 1)
      redis.call('HINCRBY', figures, 'webhook_overflowed', 1)
    end
  end
end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return queued
"""

class Dispatcher:
    """Reads the stream and queues; ``queued(endpoint_id)`` is called for each delivery queued."""

    def __init__(self, client, queued=lambda endpoint_id: None, queue_max=parking.QUEUE_MAX,
                 parked_max=parking.PARKED_MAX):
        self.client = client
        self.queue_max, self.parked_max = queue_max, parked_max
        self.queued = queued
        self.records, self.version = [], None
        self.backlog_done = False  # our own pending entries (after a crash) come first
        self.fan_out = client.register_script(_FAN_OUT_LUA)
        self.reader = groups.Reader(client, store.GROUP, CONSUMER, READ_COUNT, log, self._restart)
        self.dispatched = 0

    def endpoints(self):
        """The endpoints, reloaded when one changed."""
        version = self.client.get(store.CHANGED)
        if version != self.version or self.version is None:
            self.records = store.list_all(self.client)
            self.version = version
        return self.records

    def step(self, block_ms=500):
        """Read and queue one batch; returns how many entries it handled.

        ``herald:stream`` deleted (while we wait on it, or between reads) takes
        the group with it: the reader makes it again and reading goes on
        (groups.Reader). Deleted between our read and a fan-out, it took the
        rest of the batch too (no longer pending, so not to be queued): dropped,
        and said.
        """
        entries = self._read(block_ms)
        for done, (entry_id, fields) in enumerate(entries):
            try:
                self.dispatch(entry_id, fields)
            except redis.ResponseError as exc:
                if not self.reader.regrouped(exc):
                    raise
                log.warning("%d notifications read went with the deleted stream undispatched",
                            len(entries) - done)
                return done
        return len(entries)

    def _restart(self):
        self.backlog_done = False

    def _read(self, block_ms):
        if not self.backlog_done:
            entries = self.reader.read("0")
            self.backlog_done = not entries
            if entries:
                return entries
        return self.reader.read(">", block_ms)

    def dispatch(self, entry_id, fields):
        if not fields:  # trimmed from the stream before we read it
            log.warning("notification %s was trimmed before it was dispatched", entry_id)
            self.client.xack(STREAM, store.GROUP, entry_id)
            return
        body = with_id(fields[b"envelope"], entry_id)
        envelope = orjson.loads(body)
        published_ms = id_key(entry_id)[0]
        wanting = [r for r in self.endpoints()
                   if published_ms >= int(r["created"] * 1000)
                   and store.wants(r, envelope["topic"], envelope.get("severity", "info"),
                                   envelope.get("user"))]
        entry = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
        ids = [r["id"] for r in wanting]
        keys = [STREAM, *map(store.key, ids), *map(store.queue_key, ids),
                *map(store.parked_key, ids), *map(store.stats_key, ids), METRICS_WORKERS]
        queued = self.fan_out(keys=keys, args=[
            store.GROUP, entry, entry.encode() + b" " + body, self.queue_max, self.parked_max,
            time.time(), *(store.delivery_id(i, entry) for i in ids)])
        self.dispatched += 1
        for index in queued:
            self.queued(wanting[index - 1]["id"])
