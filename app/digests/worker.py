"""The digest worker's loop: collect a batch, send what is due, ride out Redis outages.

``python -m workers.digest`` runs it as a process (workers/digest.py).
"""
import logging
import time

from ..redis_client import UNAVAILABLE
from .collect import Collector
from .send import Sender

log = logging.getLogger("herald.digest")


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
