"""Ingest: PULL (fire-and-forget) and ROUTER (confirmed) into Redis, in batches.

Every accepted message goes to the tail of one FIFO backlog; the backlog is
written to Redis in batches of up to ``BRIDGE_BATCH`` per round trip (one
Lua script: all of a batch or none; in a sharded history, Bus.publish_batch
splits a batch by shard, one script and round trip each, all or none per
shard), so each publisher's order is kept (within a shard) and there is no
round trip per message under load. A confirmed request is
answered ``{"ok": true, "id": …}`` only once its batch is stored.

While Redis is away the backlog keeps accepting, up to ``BRIDGE_BACKLOG``.
Past that the PULL socket is no longer read (ZeroMQ's own high-water marks
then push back on the senders: nothing is dropped) and confirmed requests
are answered with an error. A confirmed request not stored within
``BRIDGE_CONFIRM_TIMEOUT`` is answered with an error and dropped, so that
what the peer is told is always true.

While Redis is known to be away, each retry PINGs before writing, so a
write is only attempted when Redis answers. A batch whose write failed all
the same (the reply lost, or not confirmed on PUBLISH_REPLICAS replicas in
time) is published again, under the same batch id, before anything else is
written: the script (each shard's, for its part) writes it only if it was not
(its batch key tells), and
answers its ids either way, so it is neither lost nor written twice, and a
WAIT after it confirms that the replicas have it. A confirmed request in such a batch that times out
is told so: it will be stored once Redis is back if it was not already.

Bad messages are dropped with a log line (at most a few a second, the rest
counted) and a counter; a confirmed peer is answered with the error. A
message that makes the checks themselves fail (a bug) is one of them, with
its traceback logged: no input stops the loop.
"""
import logging
import time
import uuid
from collections import Counter, deque

import orjson
import zmq

from app.ops import metrics
from app.redis_client import UNAVAILABLE
from workers.bridge import figures, frames

log = logging.getLogger("herald.bridge")

DRAIN_MAX = 2000        # messages read from a socket per turn
FLUSH_SECONDS = 0.05    # time spent writing batches per turn, so reading goes on
BACKOFF_FIRST, BACKOFF_MAX = 0.1, 2.0
BAD_LINES_PER_SECOND = 5


class Item:
    """One accepted notification; ``route`` is set for a confirmed request."""

    __slots__ = ("prepared", "route", "deadline", "cancelled", "in_flight")

    def __init__(self, prepared, route=None, deadline=None):
        self.prepared = prepared
        self.route = route
        self.deadline = deadline
        self.cancelled = False
        self.in_flight = False


class Ingest:
    """Reads the ingest sockets and writes to Redis; runs in the bridge's main thread."""

    def __init__(self, context, settings, bus, secure, instance=None):
        self.settings, self.bus = settings, bus
        self.instance = instance or metrics.process_label()  # host:pid, its backlog gauge's label
        self.pull = self._bind(context, zmq.PULL, settings.pull, secure)
        self.router = self._bind(context, zmq.ROUTER, settings.router, secure)
        self.backlog = deque()
        self.dropped_in_backlog = 0  # timed-out items still in the deque, skipped when reached
        self.waiting = deque()   # confirmed items, oldest first, for their deadlines
        self.unresolved = None   # (batch key, items) of a write whose outcome is unknown
        self.redis_down = True  # not known to answer yet: PING before the first write
        self.said_down = False
        self.retry_at = 0.0
        self.backoff = BACKOFF_FIRST
        self.counters = Counter()
        self.reporter = figures.Reporter(bus.client, self.instance)
        self._bad_window = (0, 0)  # (second, lines logged in it)

    @staticmethod
    def _bind(context, kind, endpoint, secure):
        socket = context.socket(kind)
        socket.rcvhwm = 10_000
        socket.linger = 1000
        secure(socket)
        socket.bind(endpoint)
        return socket

    # -- the loop --------------------------------------------------------------

    def run(self, running):
        poller = zmq.Poller()
        poller.register(self.router, zmq.POLLIN)
        poller.register(self.pull, zmq.POLLIN)
        while running():
            room = self._backlog_size() < self.settings.backlog
            poller.modify(self.pull, zmq.POLLIN if room else 0)
            ready = dict(poller.poll(self._wait_ms()))
            if self.router in ready:
                self._drain(self.router, self._on_request)
            if self.pull in ready:
                self._drain(self.pull, self._on_push)
            self.flush()
            self._expire()
            if self.reporter.due():
                self.report()

    def report(self):
        """The figures /metrics shows (figures.py); skipped while Redis is away."""
        if not self.redis_down:
            self.reporter.report(self.counters, self._backlog_size())
        else:
            self.reporter.due_at = time.monotonic() + figures.REPORT_SECONDS

    def _backlog_size(self):
        return len(self.backlog) - self.dropped_in_backlog

    def _wait_ms(self):
        if not (self.backlog or self.unresolved):
            return 1000
        return max(0, int((self.retry_at - time.monotonic()) * 1000))

    def _drain(self, socket, handle):
        for _ in range(DRAIN_MAX):
            if socket is self.pull and self._backlog_size() >= self.settings.backlog:
                return
            try:
                message = socket.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            self.counters["received"] += 1
            handle(message)

    # -- accepting -------------------------------------------------------------

    def _on_push(self, message):
        try:
            self.backlog.append(Item(self._allowed(frames.checked(frames.from_pull, message))))
        except frames.BadFrame as exc:
            self._bad(exc, "PULL")

    def _allowed(self, prepared):
        """``prepared``, unless it is private and peers are not to be trusted with that."""
        if prepared.user and not self.settings.private_allowed:
            raise frames.BadFrame("private", (
                "user: private notifications need an authenticated peer (CURVE keys, see "
                "docs/zmq-bridge.md) or BRIDGE_TRUST_LOCAL=1"))
        return prepared

    def _on_request(self, message):
        route, rest = frames.split_route(message)
        try:
            prepared = self._allowed(frames.checked(frames.from_router, rest))
        except frames.BadFrame as exc:
            self._bad(exc, "ROUTER")
            return self._reply(route, {"ok": False, "error": str(exc)})
        if self._backlog_size() >= self.settings.backlog:
            self.counters["refused_backlog_full"] += 1
            return self._reply(route, {"ok": False, "error": (
                f"backlog full ({self.settings.backlog} waiting for Redis); not stored, retry later")})
        item = Item(prepared, route, time.monotonic() + self.settings.confirm_timeout)
        self.backlog.append(item)
        self.waiting.append(item)

    def _bad(self, exc, socket_name):
        self.counters[f"bad_{exc.kind}"] += 1
        second = int(time.monotonic())
        window, lines = self._bad_window
        if window != second:
            window, lines = second, 0
        if lines < BAD_LINES_PER_SECOND:
            log.warning("dropped a bad %s message (%s): %s", socket_name, exc.kind, exc,
                        exc_info=exc.__cause__ if exc.kind == "internal" else None)
        elif lines == BAD_LINES_PER_SECOND:
            log.warning("more bad messages this second; counting them without logging")
        self._bad_window = (window, lines + 1)

    def _reply(self, route, answer):
        try:
            self.router.send_multipart(route + [orjson.dumps(answer)], zmq.NOBLOCK)
        except zmq.ZMQError:
            self.counters["replies_undeliverable"] += 1

    # -- storing -----------------------------------------------------------------

    def flush(self):
        """Write the backlog to Redis, oldest first, for at most FLUSH_SECONDS."""
        if time.monotonic() < self.retry_at:
            return
        try:
            if self.redis_down:
                self.bus.client.ping()  # write nothing until Redis answers again
            if self.unresolved:
                self._resolve()
            started = time.monotonic()
            while self.backlog and time.monotonic() - started < FLUSH_SECONDS:
                self._write_batch()
        except UNAVAILABLE as exc:
            self._set_down(exc)
            return
        if self.redis_down:
            self.redis_down = False
            self.backoff = BACKOFF_FIRST
            if self.said_down:
                self.said_down = False
                log.info("Redis is back; writing the backlog (%d waiting)", self._backlog_size())

    def _write_batch(self):
        items = []
        while self.backlog and len(items) < self.settings.batch:
            item = self.backlog.popleft()
            if item.cancelled:
                self.dropped_in_backlog -= 1
            else:
                item.in_flight = True
                items.append(item)
        if not items:
            return
        key = uuid.uuid4().hex  # the batch's id (Bus.publish_batch)
        self.unresolved = (key, items)
        ids = self.bus.publish_batch([item.prepared for item in items], key)
        self._stored(items, ids)

    def _resolve(self):
        """Publish again the batch whose reply was lost (or not confirmed): written once,
        whichever it was, and its ids answered."""
        key, items = self.unresolved  # (in flight: never cancelled, see _expire)
        ids = self.bus.publish_batch([item.prepared for item in items], key)
        self._stored(items, ids)

    def _stored(self, items, ids):
        self.unresolved = None
        self.counters["stored"] += len(items)
        for item, entry_id in zip(items, ids, strict=True):
            item.in_flight = False
            if item.route is not None:
                self._reply(item.route, {"ok": True, "id": entry_id})
                item.route = None  # answered: its deadline no longer matters

    def _set_down(self, exc):
        self.redis_down = True
        if not self.said_down:
            self.said_down = True
            log.warning("Redis is unreachable (%s); holding notifications in the backlog", exc)
        self.retry_at = time.monotonic() + self.backoff
        self.backoff = min(self.backoff * 2, BACKOFF_MAX)

    def _expire(self):
        """Answer confirmed requests that waited too long, and drop them."""
        now = time.monotonic()
        while self.waiting and self.waiting[0].deadline <= now:
            item = self.waiting.popleft()
            if item.cancelled or item.route is None:
                continue  # answered already
            self.counters["confirm_timeouts"] += 1
            if item.in_flight:
                # Its write's outcome is unknown until Redis is back; it stays queued.
                self._reply(item.route, {"ok": False, "error": (
                    f"not confirmed within {self.settings.confirm_timeout:g} s: Redis failed while "
                    "storing it; if it was not stored it will be once Redis is back, "
                    "so do not publish it again")})
                item.route = None
            else:
                item.cancelled = True
                self.dropped_in_backlog += 1
                self._reply(item.route, {"ok": False, "error": (
                    f"not stored within {self.settings.confirm_timeout:g} s (Redis is unreachable); "
                    "it was dropped, retry later")})

    # -- stopping ------------------------------------------------------------------

    def close(self, seconds):
        """Try for ``seconds`` to store what is waiting, answer the rest, close the sockets."""
        deadline = time.monotonic() + seconds
        while (self.backlog or self.unresolved) and time.monotonic() < deadline:
            self.flush()
            time.sleep(0.05)
        left = self._backlog_size()
        if left:
            log.warning("stopping with %d notifications not stored (Redis unreachable)", left)
        for item in self.backlog:
            if item.route is not None and not item.cancelled:
                self._reply(item.route, {"ok": False, "error": "the bridge is stopping; not stored"})
        self.pull.close()
        self.router.close()
