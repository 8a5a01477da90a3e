"""Dispatching: each notification of the history into every matching endpoint's queue.

The worker reads ``herald:stream`` (with ``STREAM_SHARDS=N``, every shard's stream:
app/stream/shards.py) as the consumer group ``herald:webhooks``, under the
fixed consumer name ``webhook-worker``. For each entry one Lua script pushes it
onto the queue of every endpoint that wants it (and still exists), or parks it
where that queue is full (parking.py); then the batch is acknowledged (``XACK``).
One worker dispatches at a time (the lease in worker.py), so the one that takes
over reads what its predecessor left pending first (the consumer name is the
same), and each endpoint's queue stays in id order (with several shards, in each
shard's id order, the shards' notifications interleaved by time within a read:
between shards there is no order but time, to the millisecond).

Two steps, where there was one script: the queues are in the webhooks' hash slot
(layout.py) and the group lives in the notification's stream, in that stream's slot, and a
Redis Cluster runs no script over two slots. Why the pair still queues each entry
exactly once, and loses none:

- The script records the entry in ``herald:{webhooks}:dispatched`` in the step
  that queues it, and queues nothing for an entry recorded there. A worker that
  dies between the script and the ``XACK`` leaves the entry pending; whoever reads
  it again (a worker reads its pending entries first when it becomes active, and
  after any error) finds it recorded, queues nothing, and acknowledges it.
  Dying before the script, it had done nothing: the entry is pending, and queued
  when read again.
- Once acknowledged, an entry is never read again, so its record goes (``ZREM``,
  after the ``XACK``). A death between the two leaves a record nothing reads; the
  script drops records older than ``KEEP`` (a week) as it goes.
- The script is fenced by the lease (same slot): it queues only while the lease
  names this worker. A worker paused past its lease queues nothing when it wakes
  (it could otherwise queue again what its successor had queued, acknowledged and
  forgotten) and acknowledges nothing, so what it read stays pending: the active
  worker reads its pending entries again every ``SWEEP_EVERY`` seconds and queues
  them, late but not lost.

An entry trimmed from the stream before it was read is acknowledged (and said).
An endpoint gets what was published after it was registered, never older
entries (the worker may be behind when an endpoint is added).

With a sharded history the reader (app/stream/groups.py) reads every shard and hands
each entry on under its notification id (``<ms>-<seq>-<k>`` in shard k): that id is
what the record, the delivery ids and the webhook body carry (stream ids repeat
across shards, notification ids do not), and the ``XACK`` of a batch is one per
shard it holds, each in its shard's slot, before the records go.
"""
import logging
import time

import orjson

from app.stream import groups
from app.stream.envelope import id_key, with_id
from app.webhooks import layout, parking, store

log = logging.getLogger("herald.webhooks")

CONSUMER = "webhook-worker"
READ_COUNT = 200
KEEP = 7 * 86400.0   # seconds a record of a queued entry is kept, at most (left by a death)
SWEEP_EVERY = 10.0   # seconds between reads of our pending entries (left by a paused worker)
REFUSED, ALREADY = -1, -2  # the fan-out's answers besides the list of endpoints queued for

# KEYS: the records (dispatched), the lease, the figures, then n endpoint keys, their n
# queues, n parked lists, n stats. ARGV: entry id, item, queue max, parked max, now, the
# lease holder ('': no fence), KEEP, then the n delivery ids. Queues the item for each
# endpoint that still exists (or parks it when that endpoint's queue is full) and records
# the entry; nothing when the lease is not the holder's (-1) or the entry is recorded (-2).
_FAN_OUT_LUA = parking.PARK_LUA + """
if ARGV[6] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[6] then return -1 end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -2 end
local n = (#KEYS - 3) / 4
local figures = KEYS[3]
local queued = {}
for i = 1, n do
  if redis.call('EXISTS', KEYS[3 + i]) == 1 then
    if redis.call('LLEN', KEYS[3 + n + i]) < tonumber(ARGV[3]) then
      redis.call('RPUSH', KEYS[3 + n + i], ARGV[2])
      queued[#queued + 1] = i
    else
      local record = cjson.encode({delivery = ARGV[7 + i], notification = ARGV[1],
        attempts = 0, error = 'not queued: the queue was full (WEBHOOK_QUEUE_MAX)',
        parked_at = tonumber(ARGV[5]), body = string.sub(ARGV[2], #ARGV[1] + 2)})
      park(KEYS[3 + 2 * n + i], KEYS[3 + 3 * n + i], figures, record, ARGV[4])
      redis.call('HINCRBY', KEYS[3 + 3 * n + i], 'overflowed', 1)
      redis.call('HINCRBY', figures, 'webhook_overflowed', 1)
    end
  end
end
if n > 0 then
  redis.call('ZADD', KEYS[1], ARGV[5], ARGV[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[5]) - tonumber(ARGV[7])))
end
return queued
"""


class Dispatcher:
    """Reads the stream and queues; ``queued(endpoint_id)`` is called for each delivery
    queued. ``holder``: the lease holder id that fences the fan-out (None: unfenced)."""

    def __init__(self, client, queued=lambda endpoint_id: None, queue_max=parking.QUEUE_MAX,
                 parked_max=parking.PARKED_MAX, holder=None, clock=time.monotonic):
        self.client = client
        self.queue_max, self.parked_max = queue_max, parked_max
        self.queued, self.holder, self.clock = queued, holder or "", clock
        self.records, self.version = [], None
        self.backlog_done = False  # our own pending entries (after a crash) come first
        self.sweep_at = 0.0
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
        """Read one batch, queue it and acknowledge it; returns how many entries it handled.

        A shard's stream deleted while we wait on it, or between reads, takes its
        group with it: the reader makes it again and reading goes on (groups.Reader).
        Deleted after a read, the batch read is queued still (it was published) and
        its ``XACK`` finds nothing to acknowledge. After an error, or a fan-out refused
        (the lease is not ours), what was read and not acknowledged is read again first.
        """
        entries = self._read(block_ms)
        handled = []
        try:
            for entry_id, fields in entries:
                if not self.dispatch(entry_id, fields):
                    log.info("the lease is no longer ours: %d notifications left pending for "
                             "the active webhook worker", len(entries) - len(handled))
                    self.backlog_done = False
                    break
                handled.append(entry_id)
            self._acknowledge(handled)
        except Exception:
            self.backlog_done = False
            raise
        return len(handled)

    def _acknowledge(self, ids):
        """``XACK`` (in each shard's slot: groups.ack), then forget the records (ours): in
        that order, so that an entry still pending is always recorded once queued."""
        if ids:
            groups.ack(self.client, store.GROUP, ids)
            self.client.zrem(layout.DISPATCHED, *ids)

    def _restart(self):
        self.backlog_done = False

    def _read(self, block_ms):
        if not self.backlog_done or self.clock() >= self.sweep_at:
            entries = self.reader.read("0")
            self.backlog_done = not entries
            if entries:
                return entries
            self.sweep_at = self.clock() + SWEEP_EVERY
        return self.reader.read(">", block_ms)

    def dispatch(self, entry_id, fields):
        """Queue one entry for every endpoint that wants it; False when the lease is not ours
        (nothing queued)."""
        if not fields:  # trimmed from the stream before we read it
            log.warning("notification %s was trimmed before it was dispatched", entry_id)
            return True
        body = with_id(fields[b"envelope"], entry_id)
        envelope = orjson.loads(body)
        published_ms = id_key(entry_id)[0]
        wanting = [r for r in self.endpoints()
                   if published_ms >= int(r["created"] * 1000)
                   and store.wants(r, envelope["topic"], envelope.get("severity", "info"),
                                   envelope.get("user"))]
        entry = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
        ids = [r["id"] for r in wanting]
        keys = [layout.DISPATCHED, layout.LEASE, layout.FIGURES, *map(store.key, ids),
                *map(store.queue_key, ids), *map(store.parked_key, ids),
                *map(store.stats_key, ids)]
        queued = self.fan_out(keys=keys, args=[
            entry, entry.encode() + b" " + body, self.queue_max, self.parked_max, time.time(),
            self.holder, KEEP, *(store.delivery_id(i, entry) for i in ids)])
        if queued == REFUSED:
            return False
        if queued != ALREADY:  # else queued before, and not acknowledged: a death between
            self.dispatched += 1
            for index in queued:
                self.queued(wanting[index - 1]["id"])
        return True
