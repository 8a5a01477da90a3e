"""Sending: due windows as digests, and the critical outbox, each email once.

For a due window: close it (no notification can join it after that), read
it, and unless its idempotency key is marked sent, render and send it; then,
in one MULTI/EXEC, mark the key sent and delete the window. An empty window
sends nothing. A crash before the SMTP server accepts the email: the window
is still there and is sent on restart. **The one at-least-once corner**: a
crash after the server accepted it but before the mark is written sends it
again on restart, with the same Message-ID (built from the key), which many
mail systems use to drop the copy. The outbox works the same way, one email
per critical notification.

SMTP down: nothing is dropped; sending is retried with backoff (1 s doubling
to 60 s), one log line per change of state. Without SMTP_URL, digests are
kept until it is set.
"""
import logging
import time

import orjson

from .. import metrics
from . import render, store, windows

from .smtp import ERRORS

log = logging.getLogger("herald.digest")

BACKOFF_FIRST, BACKOFF_MAX = 1.0, 60.0

_CLOSE_LUA = """
local closed = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > closed then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
"""


class Sender:
    def __init__(self, client, smtp, base_url, fault=None, clock=time.time):
        self.client = client
        self.smtp = smtp
        self.base_url = base_url
        self.fault = fault or (lambda step: None)
        self.clock = clock
        self.close_script = client.register_script(_CLOSE_LUA)
        self.retry_at = 0.0
        self.backoff = BACKOFF_FIRST
        self.failing = False
        self.warned_no_smtp = False
        self.sent = 0

    def step(self):
        """Send what is due; returns how many emails went out."""
        if self.smtp is None:
            if not self.warned_no_smtp:
                self.warned_no_smtp = True
                log.warning("SMTP_URL is not set: digests are collected and kept until it is")
            return 0
        if self.clock() < self.retry_at:
            return 0
        before = self.sent
        try:
            self.send_outbox()
            now = self.clock()
            for record in store.list_all(self.client):
                if record["enabled"] and not store.quiet_now(record, now):
                    for window in self.client.zrangebyscore(windows.windows_key(record["id"]), "-inf", now):
                        self.send_window(record, float(window))
        except ERRORS as exc:
            self._smtp_failed(exc)
            return self.sent - before
        if self.failing:
            self.failing = False
            self.backoff = BACKOFF_FIRST
            log.info("SMTP is back; sending again")
        return self.sent - before

    def _smtp_failed(self, exc):
        metrics.count(self.client, "digest_send_failures")
        if not self.failing:
            self.failing = True
            log.warning("SMTP failed (%s); nothing is dropped, retrying with backoff", exc)
        self.retry_at = self.clock() + self.backoff
        self.backoff = min(self.backoff * 2, BACKOFF_MAX)

    def send_window(self, record, window):
        """Close, send (once) and clear ``record``'s window ``window``; True if an email went."""
        digest_id = record["id"]
        self.close_script(keys=[windows.closed_key(digest_id)], args=[window])
        self.fault("send:closed")
        counts, items, total = windows.read(self.client, digest_id, window)
        key = windows.digest_key(digest_id, window)
        emailed = False
        if total and not self.client.exists(windows.sent_key(key)):
            message = render.digest_email(record, window, counts, items, total,
                                          store.schedule_of(record), None, self.base_url, key)
            self.fault("send:before-smtp")
            self.smtp.send(message)
            self.sent += 1
            metrics.count(self.client, "digest_emails_sent")
            emailed = True
            self.fault("send:after-smtp")
        with self.client.pipeline() as pipe:
            if total:
                pipe.set(windows.sent_key(key), 1, ex=windows.SENT_TTL)
            pipe.delete(windows.counts_key(digest_id, window), windows.items_key(digest_id, window))
            pipe.zrem(windows.windows_key(digest_id), str(int(window)))
            pipe.execute()
        return emailed

    def send_outbox(self):
        """Email the critical notifications waiting, oldest first."""
        for raw in self.client.lrange(windows.OUTBOX, 0, 49):
            job = orjson.loads(raw)
            record = store.get(self.client, job["digest"])
            if record is not None and store.quiet_now(record, self.clock()):
                continue  # its owner's quiet hours: it waits for their end, in order
            if record is not None and record["enabled"]:
                key = windows.critical_key(record["id"], job["envelope"])
                if not self.client.exists(windows.sent_key(key)):
                    message = render.critical_email(record, job["envelope"], None, self.base_url, key)
                    self.fault("outbox:before-smtp")
                    self.smtp.send(message)
                    self.sent += 1
                    metrics.count(self.client, "digest_emails_sent")
                    self.fault("outbox:after-smtp")
                with self.client.pipeline() as pipe:
                    pipe.set(windows.sent_key(key), 1, ex=windows.SENT_TTL)
                    pipe.lrem(windows.OUTBOX, 1, raw)
                    pipe.execute()
            else:
                self.client.lrem(windows.OUTBOX, 1, raw)
