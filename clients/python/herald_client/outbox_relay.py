"""The outbox's relay: ships committed outbox rows to Herald, in order, exactly once.

:func:`relay_once` claims a batch (herald_client/outbox_rows.py), publishes it
with one ``publish_many`` under the batch's idempotency key, and marks it
sent; a relay that dies between the publish and the mark leaves the claimed
batch for the next one, which publishes the same rows under the same key, and
Herald answers with the ids it gave the first time instead of storing them
again. :class:`Relay` runs it in a thread: after each commit that wrote rows
(woken), every ``poll`` seconds otherwise (rows another process committed and
could not ship), and with a growing random wait ("full jitter") while Herald
or the database is away, when the rows simply wait. A fork (gunicorn's
``--preload`` forks its workers from the process that made the app, and started
a relay) waits for the round in hand, and the child leaves the parent's
database and HTTP connections to it (``engine.dispose(close=False)``, as
SQLAlchemy asks of a forked process): a connection used by two processes at
once, or copied with a lock held (SQLite's are kept per process), breaks both.
In a gevent worker that patched after psycopg was imported (``--preload``) the
relay polls: a LISTEN there would block every greenlet.
"""
import json
import logging
import os
import random
import re
import sys
import threading
import time
import weakref

from . import outbox_rows, outbox_wake
from .errors import InvalidNotification, RateLimited

log = logging.getLogger("herald_client.outbox")
ROW_FIELD = re.compile(r"notifications\[(\d+)\]")
PRUNE_EVERY = 60.0  # seconds between deletions of rows sent long ago
FORK_WAIT = 5.0  # seconds a fork waits at most for the round a relay has in hand
_RUNNING = weakref.WeakSet()  # the relays running in this process (see _before_fork)
_PAUSED = []  # (relay, its round held) for the fork under way, paused until it is done


def envelope_of(row):
    """The notification a row publishes: its envelope, with the record's ``version``
    the row's id when the data gave none (a record's rows get rising ids, in commit
    order: its row lock holds a second writer until the first commits)."""
    envelope = json.loads(row.envelope)
    if _versioned(envelope):  # a record's change (not an alert, not a refresh)
        envelope["data"]["version"] = row.id
    return envelope


def as_relayed(envelope):
    """``envelope`` as the relay may publish it: with the largest ``version`` a row id can
    be (:func:`envelope_of`), so that its size is checked before it is written."""
    if not _versioned(envelope):
        return envelope
    return dict(envelope, data=dict(envelope["data"], version=LARGEST_ROW_ID))


LARGEST_ROW_ID = 2**63 - 1  # BIGINT


def _versioned(envelope):
    data = envelope.get("data")
    return envelope.get("kind") == "data" and isinstance(data, dict) and "id" in data \
        and "version" not in data


def relay_once(client, engine, table):
    """Publish every pending row, oldest first, in batches; returns how many were published.

    A row Herald refuses for good (400: its error names ``notifications[i]``) is set
    aside with Herald's message (``error``) and the rest go on; a refusal naming no
    row splits the batch until it does. Herald unreachable, rate limits, a lost
    database: the exception goes to the caller, and the rows wait.
    """
    shipped, most = 0, outbox_rows.BATCH_MOST
    while True:
        rows = outbox_rows.claim(engine, table, most)
        if not rows:
            return shipped
        try:
            replies = _publish(client, [envelope_of(row) for row in rows], rows[0].batch)
        except InvalidNotification as exc:
            if exc.field == "Idempotency-Key":  # stored before with another body: never re-key
                log.error("Herald has outbox batch %s (rows %s-%s) under another body: %s; "
                          "it is set aside, unpublished, for a look", rows[0].batch,
                          rows[0].id, rows[-1].id, exc)
                outbox_rows.refuse(engine, table, rows, None, str(exc), whole=True)
                continue
            index = _row_named(exc.field, len(rows))
            if index is None and len(rows) > 1:
                most = max(1, len(rows) // 2)  # find the row at fault in smaller batches
            elif index is None:
                index = 0
            if index is not None:
                log.error("Herald refused outbox row %s (%s): %s; it is set aside, the "
                          "others go on", rows[index].id, rows[index].topic, exc)
            outbox_rows.refuse(engine, table, rows, index, str(exc))
            continue
        outbox_rows.mark_sent(engine, table, rows, replies)
        shipped += len(rows)
        most = outbox_rows.BATCH_MOST


def ship_first(client, engine, table, batch):
    """Publish the first pending batch if it is ``batch`` (and mark it sent); returns how
    many rows went. Safe beside a relay doing the same: the same rows, the same key."""
    rows = outbox_rows.first(engine, table)
    if not rows or rows[0].batch != batch:
        return 0
    outbox_rows.mark_sent(engine, table, rows,
                          _publish(client, [envelope_of(row) for row in rows], batch))
    return len(rows)


def _publish(client, envelopes, key):
    """Herald's ``{"id", "ts"}`` for each envelope, published all or none under ``key``.
    One alone goes to the single publish, a little quicker than the batch endpoint;
    Herald fingerprints a batch of one as that one, and a batch's rows never change,
    so a retry of it takes the same way under the same key."""
    if len(envelopes) == 1:
        envelope = dict(envelopes[0])
        return [client.publish(envelope.pop("topic"), envelope.pop("title"),
                               idempotency_key=key, **envelope)]
    return client.publish_many(envelopes, idempotency_key=key)


def _row_named(field, count):
    match = ROW_FIELD.match(field or "")
    if match and int(match.group(1)) < count:
        return int(match.group(1))
    return None


class Relay:
    """:func:`relay_once` in a daemon thread, until :meth:`stop`.

    ``poll``: seconds between looks when nothing wakes it; ``base``/``cap``: the
    first and the widest window (seconds) of the random wait after a failure;
    ``keep``: seconds sent rows are kept before they are deleted (the newest
    is always kept: it is the cursor). Its start is logged (INFO, with the process id).
    """

    def __init__(self, client, engine, table, poll=1.0, base=0.5, cap=10.0, keep=3600.0):
        self.client, self.engine, self.table = client, engine, table
        self.poll, self.base, self.cap, self.keep = poll, base, cap, keep
        self._wake, self._stop = threading.Event(), threading.Event()
        self.thread = None
        self.failures = 0        # failed rounds in a row
        self.shipped = 0         # rows published by this relay
        self.last_error = None   # what the last failed round said, None once one succeeds
        self.listener = None     # woken by any process's commit (outbox_wake), where it can
        self._round = threading.Lock()  # held for a round: a fork waits for it

    def start(self):
        if self.thread is None or not self.thread.is_alive():
            self._stop.clear()
            self.thread = threading.Thread(target=self.run, name="herald-outbox-relay",
                                           daemon=True)
            self.thread.start()
            _RUNNING.add(self)
            log.info("outbox relay: started in process %d", os.getpid())
            self._listen()
        return self

    def _listen(self):
        watcher = outbox_wake.watcher(self.engine)
        if watcher is outbox_wake.Listener and _waits_block_greenlets(self.engine):
            watcher = None  # it would hold the whole worker: this relay polls
        if watcher is not None and self.listener is None:
            self.listener = watcher(self.engine, self.table, self._wake.set).start()

    @property
    def running(self):
        return self.thread is not None and self.thread.is_alive()

    def wake(self):
        """Look now: a commit wrote rows. The caller (the committing thread) then gives
        up the GIL for a moment, so the relay starts now rather than when the rest of
        the caller's request lets it (1-2 ms in a Flask view)."""
        self._wake.set()
        time.sleep(0)

    def stop(self, timeout=10.0):
        """Stop after the batch in hand (at most ``timeout`` seconds' wait)."""
        _RUNNING.discard(self)
        self._stop.set()
        self._wake.set()
        if self.listener is not None:
            self.listener.stop(timeout)
            self.listener = None
        if self.thread is not None:
            self.thread.join(timeout)

    def run(self):
        prune_at = 0.0
        while not self._stop.is_set():
            self._wake.clear()
            try:
                with self._round:
                    self.shipped += relay_once(self.client, self.engine, self.table)
                    if time.monotonic() >= prune_at:  # and rows a commit left unnumbered
                        if outbox_rows.adopt(self.engine, self.table):
                            self.shipped += relay_once(self.client, self.engine, self.table)
                        outbox_rows.prune(self.engine, self.table, self.keep)
                        prune_at = time.monotonic() + PRUNE_EVERY
            except Exception as exc:  # Herald or the database away: the rows wait
                # Unavailable's reason: without its advice to publish again (the relay does);
                # set before the count, which is what a reader waits on
                self.last_error = getattr(exc, "reason", None) or str(exc)
                self.failures += 1
                delay = self._backoff(exc)
                # Said once as a warning, then every tenth try: an outage is one line a
                # minute or so, not one a try; each try is there at DEBUG.
                level = logging.WARNING if self.failures % 10 == 1 else logging.DEBUG
                log.log(level, "outbox relay: %s (try %d; rows wait, the next try in %.1f s)",
                        self.last_error, self.failures, delay)
                self._stop.wait(delay)  # commits do not cut this short: no hammering
                continue
            if self.failures:
                log.warning("outbox relay: shipping again after %d failed tries", self.failures)
            self.failures, self.last_error = 0, None
            self._wake.wait(self.poll)

    def _backoff(self, exc):
        window = min(self.cap, self.base * 2 ** min(self.failures - 1, 20))
        floor = exc.retry_after if isinstance(exc, RateLimited) and exc.retry_after else 0.0
        return floor + random.uniform(0, window)


def _waits_block_greenlets(engine):
    """True in a process gevent patched after psycopg was imported (gunicorn's gevent
    workers with ``--preload``: the app is imported in the master): psycopg then waits
    in C, and a LISTEN's endless waits would leave no other greenlet a turn."""
    monkey = sys.modules.get("gevent.monkey")
    if engine.dialect.driver != "psycopg" or monkey is None or \
            not monkey.is_module_patched("select"):
        return False
    from psycopg import waiting
    return waiting.wait is getattr(waiting, "wait_c", None)


def _before_fork():
    """No relay is in a round, nor a SQLite watch reading, when the process forks: the
    child's copy of a connection in use would hold its locks for good."""
    for relay in list(_RUNNING):
        held = relay._round.acquire(timeout=FORK_WAIT)  # longer: publishing, not in SQL
        if isinstance(relay.listener, outbox_wake.SqliteWatch):
            relay.listener.stop()
            relay.listener = None
        _PAUSED.append((relay, held))


def _after_fork_in_parent():
    while _PAUSED:
        relay, held = _PAUSED.pop()
        if held:
            relay._round.release()
        relay._listen()


def _after_fork_in_child():
    """The parent's relays did not come along (a first request or commit starts this
    process's own), and their connections are the parent's: new pools here (closing
    the child's copy of a socket leaves the parent's open)."""
    for relay in list(_RUNNING):
        relay.engine.dispose(close=False)
        session = getattr(relay.client, "session", None)  # a HeraldClient's
        if session is not None:
            session.close()  # its pools stay usable, empty
    _RUNNING.clear()
    _PAUSED.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
