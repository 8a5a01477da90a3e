"""Collecting: each notification into the window of every subscription that wants it.

The worker reads ``herald:stream`` as the consumer group ``herald:digests``.
For each notification, the window updates of every matching subscription
and the ``XACK`` go in one MULTI/EXEC: all of it happens or none, so after
a crash the notification is either collected and acknowledged, or still
pending and collected again, never both nor neither. The transaction
WATCHes each subscription's ``closed`` mark, so nothing can land in a window
the sender has begun to close; it then goes into the next window.

A notification goes into the window of its own time (its id's), unless that
window is already closed. A critical one, for a subscription with
``critical_now``, goes to the outbox instead, to be emailed on its own.
"""
import logging

import orjson
import redis

from ..bus import STREAM
from . import store, windows
from ..notifications import id_key, with_id

log = logging.getLogger("herald.digest")

GROUP = store.GROUP
CONSUMER = "digest-worker"
READ_COUNT = 100


class Collector:
    def __init__(self, client, fault=None):
        self.client = client
        self.fault = fault or (lambda step: None)
        self.records, self.version = [], None
        self.backlog_done = False  # our own pending entries (after a crash) come first
        self.collected = 0

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
        acknowledged) come first; then new ones, waiting up to ``block_ms``.
        """
        entries = []
        if not self.backlog_done:
            replies = self.client.xreadgroup(GROUP, CONSUMER, {STREAM: "0"}, count=READ_COUNT)
            entries = replies[0][1] if replies else []
            self.backlog_done = not entries
        if self.backlog_done:
            replies = self.client.xreadgroup(GROUP, CONSUMER, {STREAM: ">"}, count=READ_COUNT,
                                             block=block_ms)
            entries = replies[0][1] if replies else []
        for entry_id, fields in entries:
            self.collect(entry_id, fields)
        return len(entries)

    def collect(self, entry_id, fields):
        if not fields:  # trimmed from the stream before we read it
            log.warning("notification %s was trimmed before it was collected", entry_id)
            self.client.xack(STREAM, GROUP, entry_id)
            return
        envelope = orjson.loads(with_id(fields[b"envelope"], entry_id))
        wanting = [r for r in self._subscriptions() if store.wants(r, envelope)]
        moment = id_key(entry_id)[0] / 1000
        with self.client.pipeline() as pipe:
            while True:
                try:
                    self._collect_once(pipe, entry_id, envelope, wanting, moment)
                    break
                except redis.WatchError:
                    continue  # a window closed meanwhile: choose again
        self.collected += 1

    def _collect_once(self, pipe, entry_id, envelope, wanting, moment):
        closed = {}
        if wanting:
            # The subscriptions' own keys too: one deleted meanwhile (its windows
            # deleted with it) must not get a window again.
            pipe.watch(*[windows.closed_key(r["id"]) for r in wanting],
                       *[store.key(r["id"]) for r in wanting])
            wanting = [r for r in wanting if pipe.exists(store.key(r["id"]))]
            closed = {r["id"]: windows.closed_upto(pipe, r["id"]) for r in wanting}
        pipe.multi()
        for record in wanting:
            if record["critical_now"] and envelope.get("severity") == "critical":
                pipe.rpush(windows.OUTBOX, orjson.dumps({"digest": record["id"], "envelope": envelope}))
            else:
                window = store.schedule_of(record).next_due(max(moment, closed[record["id"]]))
                windows.add(pipe, record["id"], window, envelope)
        pipe.xack(STREAM, GROUP, entry_id)
        self.fault("collect:before-exec")
        pipe.execute()
