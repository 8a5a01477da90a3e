"""The digest worker's loop: collect a batch, send what is due, ride out Redis outages.

``python -m workers.digest`` runs it as a process (workers/digest.py); any
number may run against one Redis (consumers.py, collect.py and send.py say
how they share the work). Once a minute the loop also deletes consumer
names that restarts left behind, and notes how many entries are pending
under its own name (for its heartbeat).
"""
import logging
import time

import redis

from app.digests.collect import Collector
from app.digests.send import Sender
from app.redis_client import UNAVAILABLE, Outage

log = logging.getLogger("herald.digest")

TIDY_EVERY = 60.0  # seconds between looks at the group's consumers


class Worker:
    """One loop: collect a batch (waiting up to ``block_ms``), then send what is due."""

    def __init__(self, client, smtp, url, fault=None, clock=time.time, consumer=None,
                 claim_idle=None):
        self.collector = Collector(client, fault, consumer, claim_idle)
        self.sender = Sender(client, smtp, url, fault, clock)
        self.pending = None  # entries pending under our name, at the last look
        self.tidy_at = 0.0

    def step(self, block_ms=500):
        self.collector.step(block_ms)
        self.sender.step()
        if time.monotonic() >= self.tidy_at:
            self.tidy()

    def tidy(self):
        """Delete stale consumer names; note our own pending count."""
        self.tidy_at = time.monotonic() + TIDY_EVERY
        try:
            self.pending, deleted = self.collector.claimer.forget_stale()
        except redis.ResponseError as exc:
            if not self.collector.reader.regrouped(exc):  # NOGROUP: the stream was recreated
                raise
            return
        if deleted:
            log.info("deleted %d stale digest consumers (nothing pending, idle): %s",
                     len(deleted), ", ".join(deleted))

    def details(self):
        """What the heartbeat shows (attributes only: called from its thread)."""
        return {"consumer": self.collector.consumer, "collected": self.collector.collected,
                "claimed": self.collector.claimed, "sent": self.sender.sent,
                "pending": self.pending}

    def run(self, running):
        outage = Outage(log)
        while running():
            try:
                if outage.down or self.collector.version is None:
                    self.collector.ensure_group()
                self.step()
                outage.ok()
            except UNAVAILABLE as exc:
                outage.failed(exc)
