"""The digest worker: collects notifications into digest windows and emails them.

    python -m workers.digest          # make run starts it

Settings: ``SMTP_URL`` (see workers/mail/smtp.py; without it digests are
kept until it is set), ``DIGEST_FROM``, ``HERALD_URL`` (the dashboard link in
emails, default http://127.0.0.1:$PORT/), ``REDIS_URL``.

Guarantees (see workers/mail/collect.py and send.py): each notification
appears in exactly one digest per matching subscription; a crash neither
loses nor doubles a digest, except a crash between the SMTP server
accepting an email and the worker marking it sent, which sends it again
with the same Message-ID; SMTP down is retried with backoff, nothing dropped.
Run one digest worker per Redis (its consumer name is fixed, so that after
a crash it takes up its own pending entries).
"""
import logging
import os
import signal
import time

from app import logs
from app.config import redis_url
from app.redis_client import UNAVAILABLE, connect

from .mail.collect import Collector
from .mail.send import Sender
from .mail.smtp import Smtp, SmtpUrlError

log = logging.getLogger("herald.digest")


def base_url():
    return os.environ.get("HERALD_URL") or f"http://127.0.0.1:{os.environ.get('PORT', '5000')}/"


class Worker:
    """One loop: collect a batch (waiting up to ``block_ms``), then send what is due."""

    def __init__(self, client, smtp, url, fault=None, clock=time.time):
        self.collector = Collector(client, fault)
        self.sender = Sender(client, smtp, url, fault, clock)

    def step(self, block_ms=500):
        self.collector.step(block_ms)
        self.sender.step()

    def run(self, running):
        backoff, down = 0.1, False
        while running():
            try:
                if down or self.collector.version is None:
                    self.collector.ensure_group()
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


def main():
    logs.configure()
    try:
        smtp = Smtp.from_env()
    except SmtpUrlError as exc:
        raise SystemExit(f"digest worker: {exc}") from None
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.clear())
    signal.signal(signal.SIGINT, lambda *_: running.clear())
    worker = Worker(connect(redis_url(), socket_timeout=10), smtp, base_url())
    log.info("collecting digests; sending %s", f"via {smtp.host}:{smtp.port}" if smtp else "nowhere yet (no SMTP_URL)")
    worker.run(lambda: bool(running))
    log.info("stopped; %d collected, %d emails sent", worker.collector.collected, worker.sender.sent)


if __name__ == "__main__":
    main()
