"""The digest worker: collects notifications into digest windows and emails them.

    python -m workers.digest          # make run starts it

Settings: ``SMTP_URL`` (see app/digests/smtp.py; without it digests are
kept until it is set), ``DIGEST_FROM``, ``HERALD_URL`` (the dashboard link in
emails, default http://127.0.0.1:$PORT/), ``DIGEST_CONSUMER`` (this worker's
consumer name, default ``digest-<host>-<pid>``), ``DIGEST_CLAIM_IDLE``
(seconds before a silent worker's pending entries are taken over, default
30), ``HEARTBEAT_INTERVAL``, ``REDIS_URL``.

Guarantees (see app/digests/collect.py and send.py): each notification
appears in exactly one digest per matching subscription; a crash neither
loses nor doubles a digest, except a crash between the SMTP server
accepting an email and the worker marking it sent, which sends it again
with the same Message-ID; SMTP down is retried with backoff, nothing dropped.

Run as many as you like against one Redis or a Redis Cluster (every digest key
shares the hash tag ``{digests}``: app/digests/layout.py), on one host or several: they
share the consumer group under names of their own, a survivor takes over
what a dead one left pending after ``DIGEST_CLAIM_IDLE``, a collected marker
keeps a slow one from collecting a notification twice, and a lease per email
lets one worker alone send it (app/digests/consumers.py, collect.py, send.py).
Each beats in ``herald:workers:beats`` (role ``digest``) until it stops.
"""
import logging
import signal

from app.digests import consumers
from app.digests.smtp import Smtp, SmtpUrlError
from app.digests.worker import Worker
from app.key_layout import connect
from app.ops import logs, worker_health
from app.ops.heartbeats import Heartbeat
from app.settings import herald_url, redis_url

log = logging.getLogger("herald.digest")


def main():
    logs.configure()
    consumer, claim_idle = consumers.consumer_name(), consumers.claim_idle()
    client = connect(redis_url(), socket_timeout=10)
    try:
        smtp = Smtp.from_env()
    except SmtpUrlError as exc:
        # Shown by /readyz and /metrics, not only in this process's last words.
        worker_health.fault(client, "digest worker", f"{exc}; fix SMTP_URL and restart")
        raise SystemExit(f"digest worker: {exc}") from None
    worker_health.ok(client, "digest worker")
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.clear())
    signal.signal(signal.SIGINT, lambda *_: running.clear())
    worker = Worker(client, smtp, herald_url(), consumer=consumer, claim_idle=claim_idle)
    beat = Heartbeat(client, "digest", worker.details).start()
    log.info("collecting digests as %s; sending %s", consumer,
             f"via {smtp.host}:{smtp.port}" if smtp else "nowhere yet (no SMTP_URL)")
    try:
        worker.run(lambda: bool(running))
    finally:
        beat.stop()
    log.info("stopped; %d collected, %d emails sent", worker.collector.collected, worker.sender.sent)


if __name__ == "__main__":
    main()
