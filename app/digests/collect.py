"""Collecting: each notification into the window of every subscription that wants it.

The workers read the history (``herald:stream``; with ``STREAM_SHARDS=N`` every
shard's stream, app/stream/shards.py) as the consumer group ``herald:digests``,
each under its own consumer name (consumers.py), so each new entry goes to
one of them. For each notification, the window updates of every matching
subscription and its *collected marker* ``herald:{digests}:collected:<notification
id>`` (kept a day) go in one MULTI/EXEC; then the entry is acknowledged
(``XACK``, in its shard). The transaction WATCHes the marker, so whoever comes second (a
peer that claimed the entry from a slow owner, or that owner, alive after all)
finds it set, or has its transaction aborted by the first's write and then
finds it set, and only acknowledges the entry. It also WATCHes each
subscription's ``closed`` mark, so nothing lands in a window the sender has
begun to close (it goes into the next window), and each subscription's own
key, so a subscription deleted meanwhile gets no window again.

Why the acknowledgement is a step of its own: the digests' keys share one hash
slot (layout.py) and the group lives in the notification's stream, in another, and a
Redis Cluster runs a transaction in one slot only. It stays exactly once: a
crash between the transaction and the ``XACK`` leaves the entry pending with
its marker set, and whoever collects it next (this consumer on restart, or a
peer claiming it after ``DIGEST_CLAIM_IDLE``) finds the marker and only
acknowledges it; a crash before the transaction leaves it pending and
uncollected, to be collected then. (The one way through: the entry left
pending and no digest worker at all running for the marker's whole day; then
it is collected a second time. The slow-owner race above had that bound
already.) The marker is written only for a notification some subscription
wants; one nobody wants is just acknowledged, since collecting it again
changes nothing. Through a failover: on one Redis (and its replicas) the two
steps reach a replica in order, so one that has the ``XACK`` has the
transaction too; on a cluster they are on two masters, and a master of the
digests' slot lost within its replication lag after the transaction, while the
stream's kept the ``XACK``, loses that notification from its digest (replication
is asynchronous; a bounded ``WAIT`` before the ``XACK`` would close this).

A sharded history changes none of that: the reader (app/stream/groups.py) reads
every shard and hands each entry on under its notification id (``<ms>-<seq>-<k>``
in shard k), which names its shard, so the marker is the notification's own
(stream ids repeat across shards, notification ids do not) and the ``XACK`` goes
to that shard; the takeover and the tidying go shard by shard (consumers.py).

A notification goes into the window of its own time (its id's), unless that
window is already closed. A critical one, for a subscription with
``critical_now``, goes to the outbox instead, to be emailed on its own.
"""
import logging
import time

import orjson
import redis

from app.digests import consumers, store, windows
from app.digests.layout import name
from app.stream import groups
from app.stream.envelope import id_key, with_id

log = logging.getLogger("herald.digest")

GROUP = store.GROUP
READ_COUNT = 100
COLLECTED_TTL = 86400  # seconds a collected marker is kept
CLAIM_EVERY_MAX = 5.0   # seconds between looks for idle pending entries, at most


def collected_key(entry_id):
    """The marker set when notification ``entry_id`` (its notification id, as the reader
    hands it on) has been collected."""
    return name(f"collected:{entry_id.decode() if isinstance(entry_id, bytes) else entry_id}")


class Collector:
    """Collects as consumer ``consumer`` (default: consumers.consumer_name()), taking over
    entries other consumers left pending for ``claim_idle`` seconds."""

    def __init__(self, client, fault=None, consumer=None, claim_idle=None, clock=time.monotonic):
        self.client = client
        self.fault = fault or (lambda step: None)
        self.consumer = consumer or consumers.consumer_name()
        idle = claim_idle if claim_idle is not None else consumers.claim_idle()
        self.claimer = consumers.Claimer(client, self.consumer, idle)
        self.reader = groups.Reader(client, GROUP, self.consumer, READ_COUNT, log, self._restart)
        self.claim_every = min(idle / 2, CLAIM_EVERY_MAX)
        self.claim_at = 0.0
        self.clock = clock
        self.records, self.version = [], None
        self.backlog_done = False  # our own pending entries (after a crash) come first
        self.collected = 0
        self.claimed = 0
        self.duplicates = 0  # entries found already collected (by a peer): acknowledged only

    def ensure_group(self):
        store.ensure_group(self.client)

    def _subscriptions(self):
        version = self.client.get(store.CHANGED)
        if version != self.version:
            self.records = [r for r in store.list_all(self.client) if r["enabled"]]
            self.version = version
        return self.records

    def step(self, block_ms=500):
        """Read and collect one batch; returns how many entries it handled.

        After a start, our own pending entries (read before a crash, never
        acknowledged; only with a fixed DIGEST_CONSUMER) come first; then,
        every so often, entries idle under another consumer (or under us, left
        by a lost connection); then new ones, waiting up to ``block_ms``.
        A shard's stream deleted takes its group with it: it is made again and
        collecting goes on (groups.Reader).
        """
        try:
            return self._step(block_ms)
        except redis.ResponseError as exc:  # XAUTOCLAIM's NOGROUP; reads see to their own
            if not self.reader.regrouped(exc):
                raise
            return 0

    def _restart(self):
        self.backlog_done = False
        self.claimer.restart()

    def _step(self, block_ms):
        entries = []
        if not self.backlog_done:
            entries = self.reader.read("0")
            self.backlog_done = not entries
        if self.backlog_done and self.clock() >= self.claim_at:
            entries = self._claim()
        if self.backlog_done and not entries:
            entries = self.reader.read(">", block_ms)
        for entry_id, fields in entries:
            self.collect(entry_id, fields)
        return len(entries)

    def _claim(self):
        entries, deleted, done = self.claimer.claim(READ_COUNT)
        if done:
            self.claim_at = self.clock() + self.claim_every
        if deleted:
            log.warning("%d pending notifications were trimmed before they were collected",
                        len(deleted))
        if entries:
            self.claimed += len(entries)
            log.info("took over %d notifications another digest worker left pending",
                     len(entries))
        return entries

    def collect(self, entry_id, fields):
        if not fields:  # trimmed from the stream before we read it
            log.warning("notification %s was trimmed before it was collected", entry_id)
            groups.ack(self.client, GROUP, [entry_id])
            return
        envelope = orjson.loads(with_id(fields[b"envelope"], entry_id))
        wanting = [r for r in self._subscriptions() if store.wants(r, envelope)]
        done = self._record(entry_id, envelope, wanting) if wanting else True
        self.fault("collect:before-ack")
        groups.ack(self.client, GROUP, [entry_id])  # a step apart: another slot (module doc)
        if done:
            self.collected += 1
        else:
            self.duplicates += 1

    def _record(self, entry_id, envelope, wanting):
        """Put the entry in the windows (or outbox) of ``wanting`` and set its marker, in
        one transaction; False when the marker says it was collected already."""
        moment = id_key(entry_id)[0] / 1000
        with self.client.pipeline(transaction=True) as pipe:  # all in the digests' slot
            while True:
                try:
                    return self._record_once(pipe, entry_id, envelope, wanting, moment)
                except redis.WatchError:
                    continue  # a window closed, or a peer collected it, meanwhile: look again

    def _record_once(self, pipe, entry_id, envelope, wanting, moment):
        """One try of the transaction."""
        marker = collected_key(entry_id)
        # The subscriptions' own keys too: one deleted meanwhile (its windows
        # deleted with it) must not get a window again.
        pipe.watch(marker, *[windows.closed_key(r["id"]) for r in wanting],
                   *[store.key(r["id"]) for r in wanting])
        if pipe.exists(marker):  # a peer collected it (it was claimed from us, or by us)
            pipe.reset()
            return False
        wanting = [r for r in wanting if pipe.exists(store.key(r["id"]))]
        if not wanting:  # every one deleted meanwhile: nothing to collect
            pipe.reset()
            return True
        closed = {r["id"]: windows.closed_upto(pipe, r["id"]) for r in wanting}
        pipe.multi()
        for record in wanting:
            if record["critical_now"] and envelope.get("severity") == "critical":
                pipe.rpush(windows.OUTBOX, orjson.dumps({"digest": record["id"], "envelope": envelope}))
            else:
                window = store.schedule_of(record).next_due(max(moment, closed[record["id"]]))
                windows.add(pipe, record["id"], window, envelope)
        pipe.set(marker, 1, ex=COLLECTED_TTL)
        self.fault("collect:before-exec")
        pipe.execute()
        return True
