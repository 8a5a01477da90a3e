"""The webhook worker's loop: the dispatcher in this thread, one sender thread per endpoint.

``python -m workers.webhooks`` runs it as a process (workers/webhooks.py).

Active and standby: each endpoint must have one sender (its order is the
order of its queue) and the stream one dispatcher (so the queues fill in id
order), so of several webhook workers on one Redis one is active, holding
the lease ``herald:{webhooks}:lease`` (``WEBHOOK_LEASE`` seconds, renewed each
round of the loop), and the others stand by, trying for it every second.
When the active one dies the lease lapses and a standby takes over, reading
first what its predecessor left pending (the consumer name is the same) and
then the queues from their heads. A sender sends nothing once its worker's
lease may have lapsed by its own clock (leases.Lease.held), so a worker
paused past its lease does not race its successor when it wakes, beyond at
most the one POST it had under way: delivered twice, with the same
``Herald-Delivery`` id, which at-least-once delivery allows. The dispatcher's
fan-out is fenced by the lease itself (it is in the webhooks' slot: layout.py),
so such a worker queues nothing either (dispatch.py).
"""
import logging
import time

from app.ops import metrics
from app.ops.leases import Lease
from app.redis_client import UNAVAILABLE, Outage
from app.webhooks import layout, store
from app.webhooks.dispatch import Dispatcher
from app.webhooks.sender import Sender

log = logging.getLogger("herald.webhooks")

HEARTBEAT_EVERY = 5  # seconds
LEASE_KEY = layout.LEASE
STANDBY_WAIT = 1.0  # seconds between a standby's tries for the lease


class Worker:
    def __init__(self, client, settings, holder=None):
        self.client, self.settings = client, settings
        self.senders = {}
        self.lease = Lease(client, LEASE_KEY, settings.lease, holder)
        self.dispatcher = Dispatcher(client, self._queued, settings.queue_max, settings.parked_max,
                                     holder=self.lease.holder)
        self.active = False
        self.said_standby = False
        self.queued = None  # deliveries waiting in all queues, at the last look
        self.beat_at = 0.0
        self.grouped = False

    def _queued(self, endpoint_id):
        sender = self.senders.get(endpoint_id)
        if sender is not None:
            sender.wake()

    def details(self):
        """What the heartbeat shows (attributes only: called from its thread)."""
        return {"active": self.active, "dispatched": self.dispatcher.dispatched,
                "endpoints": len(self.senders), "queued": self.queued}

    def sync_senders(self):
        """A sender for each endpoint, none for a deleted one."""
        wanted = {r["id"] for r in self.dispatcher.endpoints()}
        for endpoint_id in wanted - set(self.senders):
            sender = self.senders[endpoint_id] = Sender(self.client, endpoint_id, self.settings,
                                                        active=self.lease.held)
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
            self._count_queued()

    def _count_queued(self):
        with self.client.pipeline(transaction=False) as pipe:
            for endpoint_id in self.senders:
                pipe.llen(store.queue_key(endpoint_id))
            self.queued = sum(pipe.execute())

    def lead(self):
        """Keep (or take) the lease; True while this worker is the active one."""
        ours = self.lease.keep()
        if ours and not self.active:
            self.active, self.said_standby = True, False
            self.dispatcher.backlog_done = False  # what the last active one left pending first
            log.info("active: dispatching and delivering (lease %s)", self.lease.holder)
        elif not ours and (self.active or not self.said_standby):
            if self.active:
                self.stop()
            self.active, self.said_standby = False, True
            log.info("standing by: the webhook worker %s is active", self.lease.holder_now())
        return self.active

    def run(self, running):
        outage = Outage(log)
        while running():
            try:
                if not self.lead():
                    time.sleep(STANDBY_WAIT)
                    continue
                if outage.down or not self.grouped:
                    store.ensure_group(self.client)
                    self.grouped = True
                self.step()
                outage.ok()
            except UNAVAILABLE as exc:
                outage.failed(exc)
        self.stop()
        if self.active:
            self.lease.release()  # a standby takes over at once
            self.active = False

    def stop(self, seconds=15):
        """Stop the senders, letting a POST under way finish (up to ``seconds`` in all)."""
        for sender in self.senders.values():
            sender.stop()
        deadline = time.monotonic() + seconds
        for sender in self.senders.values():
            sender.join(max(0.0, deadline - time.monotonic()))
        self.senders.clear()
