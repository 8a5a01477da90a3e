"""The digest worker: collects notifications into digest windows and emails them.

    python -m workers.digest          # make run starts it

Settings: ``SMTP_URL`` (see app/digests/smtp.py; without it digests are
kept until it is set), ``DIGEST_FROM``, ``HERALD_URL`` (the dashboard link in
emails, default http://127.0.0.1:$PORT/), ``REDIS_URL``.

Guarantees (see app/digests/collect.py and send.py): each notification
appears in exactly one digest per matching subscription; a crash neither
loses nor doubles a digest, except a crash between the SMTP server
accepting an email and the worker marking it sent, which sends it again
with the same Message-ID; SMTP down is retried with backoff, nothing dropped.
Run one digest worker per Redis (its consumer name is fixed, so that after
a crash it takes up its own pending entries).
"""
import logging
import signal

from app import logs, worker_status
from app.config import herald_url, redis_url
from app.digests.smtp import Smtp, SmtpUrlError
from app.digests.worker import Worker
from app.redis_client import connect

log = logging.getLogger("herald.digest")


def main():
    logs.configure()
    client = connect(redis_url(), socket_timeout=10)
    try:
        smtp = Smtp.from_env()
    except SmtpUrlError as exc:
        # Shown by /readyz and /metrics, not only in this process's last words.
        worker_status.fault(client, "digest worker", f"{exc}; fix SMTP_URL and restart")
        raise SystemExit(f"digest worker: {exc}") from None
    worker_status.ok(client, "digest worker")
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.clear())
    signal.signal(signal.SIGINT, lambda *_: running.clear())
    worker = Worker(client, smtp, herald_url())
    log.info("collecting digests; sending %s", f"via {smtp.host}:{smtp.port}" if smtp else "nowhere yet (no SMTP_URL)")
    worker.run(lambda: bool(running))
    log.info("stopped; %d collected, %d emails sent", worker.collector.collected, worker.sender.sent)


if __name__ == "__main__":
    main()
