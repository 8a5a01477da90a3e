"""The webhook worker's loop: the dispatcher in this thread, one sender thread per endpoint.

``python -m workers.webhooks`` runs it as a process (workers/webhooks.py).
Run one per Redis: its consumer name is fixed, so that after a crash it
takes up its own pending entries, and each endpoint must have one sender.
"""
import logging
import time

from .. import metrics
from ..redis_client import UNAVAILABLE
from . import store
from .dispatch import Dispatcher
from .sender import Sender

log = logging.getLogger("herald.webhooks")

HEARTBEAT_EVERY = 5  # seconds


class Worker:
    def __init__(self, client, settings):
        self.client, self.settings = client, settings
        self.senders = {}
        self.dispatcher = Dispatcher(client, self._queued)
        self.beat_at = 0.0
        self.grouped = False

    def _queued(self, endpoint_id):
        sender = self.senders.get(endpoint_id)
        if sender is not None:
            sender.wake()

    def sync_senders(self):
        """A sender for each endpoint, none for a deleted one."""
        wanted = {r["id"] for r in self.dispatcher.endpoints()}
        for endpoint_id in wanted - set(self.senders):
            sender = self.senders[endpoint_id] = Sender(self.client, endpoint_id, self.settings)
            sender.start()
        for endpoint_id in set(self.senders) - wanted:
            self.senders.pop(endpoint_id).stop()
        for endpoint_id, sender in list(self.senders.items()):
            if not sender.is_alive():  # stopped itself (deleted then made again: no)
                self.senders.pop(endpoint_id)

    def step(self, block_ms=500):
        self.sync_senders()
        self.dispatcher.step(block_ms)
        now = time.time()
        if now - self.beat_at >= HEARTBEAT_EVERY:
            metrics.gauge(self.client, "webhook_heartbeat", now)
            self.beat_at = now

    def run(self, running):
        backoff, down = 0.1, False
        while running():
            try:
                if down or not self.grouped:
                    store.ensure_group(self.client)
                    self.grouped = True
                self.step()
                if down:
                    log.info("Redis is back")
                down, backoff = False, 0.1
            except UNAVAILABLE as exc:
                if not down:
                    log.warning("Redis is unreachable (%s); retrying with backoff", exc)
                down = True
                time.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
        self.stop()

    def stop(self, seconds=15):
        """Stop the senders, letting a POST under way finish (up to ``seconds`` in all)."""
        for sender in self.senders.values():
            sender.stop()
        deadline = time.monotonic() + seconds
        for sender in self.senders.values():
            sender.join(max(0.0, deadline - time.monotonic()))
