"""The webhook worker: every matching notification POSTed, signed, to each registered endpoint.

    python -m workers.webhooks        # make run starts it

Reads ``herald:stream`` as the consumer group ``herald:webhooks``, queues
each notification for every endpoint that wants it, and sends each
endpoint's queue in order from a thread of its own (app/webhooks/).
Settings: ``WEBHOOK_ALLOW``, ``WEBHOOK_BACKOFF_BASE``, ``WEBHOOK_BACKOFF_MAX``,
``WEBHOOK_RETRY_FOR``, ``WEBHOOK_4XX_RETRIES``, ``WEBHOOK_CONNECT_TIMEOUT``,
``WEBHOOK_TIMEOUT``, ``WEBHOOK_LEASE``, ``HEARTBEAT_INTERVAL``, ``REDIS_URL``;
see docs/webhooks.md.

Guarantees: nothing published after an endpoint was registered is lost, by
a crash of this worker or of Redis (append-only file on); each endpoint
gets its notifications in id order, at least once, with a ``Herald-Delivery``
id that is the same on every attempt.

Run two (or more) for failover, not for throughput: one is active (it holds
the lease ``herald:{webhooks}:lease``), the others stand by and one takes over
within ``WEBHOOK_LEASE`` seconds (default 10) of the active one's death, or
at once when it stops cleanly (app/webhooks/worker.py). Each beats in
``herald:workers:beats`` (role ``webhooks``) until it stops.
"""
import logging
import signal

from app.key_layout import connect
from app.ops import logs, worker_health
from app.ops.heartbeats import Heartbeat
from app.settings import redis_url
from app.webhooks import outbound, store
from app.webhooks.settings import Settings
from app.webhooks.worker import Worker

log = logging.getLogger("herald.webhooks")
WORKER = "webhook worker"


def main():
    logs.configure()
    # A connection for each endpoint's sender at once, and the dispatcher's; a single
    # Redis's keys moved to their tagged names first, once (app/key_layout.py).
    client = connect(redis_url(), socket_timeout=10, max_connections=store.MAX_ENDPOINTS + 10)
    try:
        settings = Settings.from_env()
        outbound.check_allow_setting()
    except SystemExit as exc:
        worker_health.fault(client, WORKER, f"{exc}; fix the setting and restart")
        raise
    worker_health.ok(client, WORKER)
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.clear())
    signal.signal(signal.SIGINT, lambda *_: running.clear())
    worker = Worker(client, settings)
    beat = Heartbeat(client, "webhooks", worker.details).start()
    log.info("delivering webhooks (as %s, active while it holds the lease)", worker.lease.holder)
    try:
        worker.run(lambda: bool(running))
    finally:
        beat.stop()
    log.info("stopped; %d notifications dispatched", worker.dispatcher.dispatched)


if __name__ == "__main__":
    main()
