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

Several workers: any of them may find the same due window or outbox entry.
Before sending, a worker takes the email's lease (``SET
herald:{digests}:sending:<key> NX PX``, 120 s: longer than an SMTP exchange
with its 10 s timeouts) and lets go of it after marking the email sent; a
worker that finds the lease taken leaves the email to its holder. Under the
lease it reads the window and the sent mark afresh, so an email a peer has
just finished is not sent again. A holder that dies lets its lease lapse,
and another worker sends the email then (or, if the holder had got it
accepted, sends the copy of the corner above). The one case the lease does
not cover: an SMTP exchange that outlasts it (a server that answers each
step just within its timeout) may be sent by a second worker too, with the
same Message-ID.

On a Redis Cluster: every key written here (the closed mark, the window, the sent
mark, the outbox, the leases) carries the digests' hash tag (layout.py), so each
MULTI/EXEC and the closing script stay in one slot, and are as atomic as on one Redis.

SMTP down: nothing is dropped; sending is retried with backoff (1 s doubling
to 60 s), one log line per change of state. Without SMTP_URL, digests are
kept until it is set.
"""
import logging
import time

import orjson

from app.digests import render, store, windows
from app.digests.layout import name
from app.digests.smtp import ERRORS
from app.ops import metrics
from app.ops.leases import ItemLeases

log = logging.getLogger("herald.digest")

BACKOFF_FIRST, BACKOFF_MAX = 1.0, 60.0
SENDING = name("sending:")  # + an email's idempotency key: who is sending it
SEND_LEASE = 120.0  # seconds; longer than an SMTP exchange (a 10 s timeout per step)

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
        self.leases = ItemLeases(client, SENDING, SEND_LEASE)

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
        """Close, send (once) and clear ``record``'s window ``window``; True if an email went.
        False too when another worker holds its lease (it is sending it)."""
        digest_id = record["id"]
        key = windows.digest_key(digest_id, window)
        if not self.leases.take(key):
            return False
        try:
            return self._send_window(record, digest_id, window, key)
        finally:
            self.leases.release(key)

    def _send_window(self, record, digest_id, window, key):
        self.close_script(keys=[windows.closed_key(digest_id)], args=[window])
        self.fault("send:closed")
        counts, items, total = windows.read(self.client, digest_id, window)
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
        with self.client.pipeline(transaction=True) as pipe:  # one slot: windows' keys
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
                if not self.leases.take(key):
                    continue  # another worker is sending it
                try:
                    self._send_critical(record, job, raw, key)
                finally:
                    self.leases.release(key)
            else:
                self.client.lrem(windows.OUTBOX, 1, raw)

    def _send_critical(self, record, job, raw, key):
        if not self.client.exists(windows.sent_key(key)):
            if self.client.lpos(windows.OUTBOX, raw) is None:
                return  # a peer sent it and took it off the outbox since we looked
            message = render.critical_email(record, job["envelope"], None, self.base_url, key)
            self.fault("outbox:before-smtp")
            self.smtp.send(message)
            self.sent += 1
            metrics.count(self.client, "digest_emails_sent")
            self.fault("outbox:after-smtp")
        with self.client.pipeline(transaction=True) as pipe:
            pipe.set(windows.sent_key(key), 1, ex=windows.SENT_TTL)
            pipe.lrem(windows.OUTBOX, 1, raw)
            pipe.execute()
