"""Bounds under a reconnect storm: connects at a bounded rate, replays a few at a time.

When a web process restarts, every client it had comes back within seconds
(socket.io issue 5413 calls it "a self-inflicted DDoS"). Each connect costs
a token check and a subscription read in Redis; each one with a ``last_id``
also costs a replay: history read from Redis, filtered, encoded and sent.
Thousands of those at once would share the gevent loop with the relay, so
the clients already back would wait for their live notifications behind
everybody's replay, and the process would hold every replay in memory at
the same moment. So each web process:

- admits at most ``rate`` connects a second, in bursts of up to ``burst``
  (:class:`~.token_bucket.TokenBucket`; ``rate`` 0: no bound), Socket.IO connects
  and event streams alike;
- runs at most ``concurrency`` replays at once; up to ``queue`` more wait
  their turn (their connection is accepted and held by the relay, so
  nothing published meanwhile is lost), in arrival order
  (:class:`ReplayTurns`; ``concurrency`` 0: no bound);
- refuses any connect past those at once, never leaving it to time out,
  with :class:`Busy`: ``unavailable: busy, retry later`` and a
  ``retry_after`` in seconds. Herald's browser client treats it as it
  treats every ``unavailable`` refusal: it retries, no sooner than
  ``retry_after``, plus a random delay (clients/js/herald.js).

``retry_after`` comes from the process's :class:`RetrySchedule`: each refusal is
given the next free moment at the rate the process admits connects
(``rate``; without one, the rate replays got done over the last few
seconds, and at least ``8 × concurrency`` a second), so that the clients
refused in one burst come back spread over the time it takes to admit them,
not all together again (so the cap on ``retry_after`` is far: a cap brings
those past it back together). A rate guessed too high costs more
refusals, each of which moves the next free moment further; one too low
leaves the process idle while its clients wait: so it leans high.
"""
import collections
import time

import socketio

from app.realtime.per_address import SessionsPerAddress
from app.realtime.token_bucket import TokenBucket

BUSY = "unavailable: busy, retry later"
RETRY_AFTER_MIN = 0.25  # seconds: the earliest a refused client is asked back
RETRY_AFTER_MAX = 300.0  # seconds: the latest, however long the backlog
TURN_WAIT_MAX = 60.0    # seconds a held connection may wait for its replay's turn
RATE_WINDOW = 3.0       # seconds over which the rate replays get done is measured
RATE_PER_SLOT = 8.0     # replays a second one place of REPLAY_CONCURRENCY is assumed to do, at least


class Busy(Exception):
    """Refused for now: come back in ``retry_after`` seconds. ``bound`` says which
    bound was reached (``rate`` or ``replays``)."""

    def __init__(self, bound, retry_after):
        super().__init__(f"{BUSY} ({bound})")
        self.bound = bound
        self.retry_after = retry_after

    def refusal(self):
        """The Socket.IO connect refusal: ``{"message": BUSY, "data": {"retry_after": s}}``
        in the CONNECT_ERROR packet (socket.io-client: ``error.message``, ``error.data``)."""
        return socketio.exceptions.ConnectionRefusedError(BUSY, {"retry_after": self.retry_after})


class RetrySchedule:
    """Hands each refused client the next free moment at ``rate`` a second, so that
    those told to come back arrive no faster than they can be taken."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.horizon = 0.0  # the last moment handed out

    def later(self, rate):
        """Seconds until the next free moment (between the floor and the cap)."""
        now = self.clock()
        self.horizon = max(self.horizon, now) + 1.0 / max(rate, 0.001)
        return round(min(RETRY_AFTER_MAX, max(RETRY_AFTER_MIN, self.horizon - now)), 2)


class Turn:
    """One connection's place for its replay: granted at once, or waiting in line.

    A waiter either sleeps in :meth:`wait` (an event stream's own greenlet), or
    sets ``start``, called once its turn comes: a Socket.IO connection waits
    with no greenlet at all (thousands of parked greenlets, each with its saved
    stack, were most of a storm's peak memory) and its replay is started then.
    """

    __slots__ = ("turns", "event", "granted", "started", "finished", "start")

    def __init__(self, turns, event=None):
        self.turns = turns
        self.event = event
        self.granted = event is None
        self.started = None
        self.finished = False
        self.start = None

    def wait(self, gone, most=TURN_WAIT_MAX):
        """Wait until it is this turn's go: True; False when ``gone()`` says the
        connection left first (its disconnect calls :meth:`wake`), or after ``most``
        seconds. It sleeps until woken: thousands waiting cost nothing (a waiter
        that polled every 0.25 s was 9% of a restarted process's time in a storm)."""
        deadline = self.turns.clock() + most
        while not self.granted:
            left = deadline - self.turns.clock()
            if gone() or left <= 0:
                return False
            self.event.wait(left)
            if not self.granted:
                self.event.clear()  # woken to look at gone(): wait again
        self.started = self.turns.clock()
        return not gone()

    def wake(self):
        """The connection went away: a waiting turn looks at ``gone()`` now."""
        if self.event is not None:
            self.event.set()

    def done(self):
        """The replay ended (or never ran): the next in line gets its go. Idempotent."""
        if not self.finished:
            self.finished = True
            self.turns.finish(self)


class ReplayTurns:
    """At most ``concurrency`` replays at once, ``queue`` more waiting in arrival order.

    ``create_event`` makes the event a waiting turn sleeps on (the server's own
    kind: a gevent event under gevent).
    """

    def __init__(self, concurrency, queue, create_event, clock=time.monotonic):
        self.concurrency = concurrency
        self.queue = queue
        self.create_event = create_event
        self.clock = clock
        self.running = 0
        self.waiting = collections.deque()
        self.ended = collections.deque()  # when the replays of the last RATE_WINDOW ended

    def full(self):
        """True when a replay more would find no place, running or waiting."""
        return (self.concurrency > 0 and self.running >= self.concurrency
                and len(self.waiting) >= self.queue)

    def rate(self):
        """Replays done a second lately, and at least RATE_PER_SLOT per place (when
        the line is full the loop is busy, and what is measured then runs low)."""
        horizon = self.clock() - RATE_WINDOW
        while self.ended and self.ended[0] < horizon:
            self.ended.popleft()
        return max(RATE_PER_SLOT * self.concurrency, len(self.ended) / RATE_WINDOW)

    def reserve(self):
        """A :class:`Turn`, granted or waiting; None when the line is full."""
        if self.concurrency <= 0:
            return Turn(self)
        if self.running < self.concurrency:
            self.running += 1
            return Turn(self)
        if len(self.waiting) >= self.queue:
            return None
        turn = Turn(self, self.create_event())
        self.waiting.append(turn)
        return turn

    def finish(self, turn):
        if self.concurrency <= 0:
            return
        if not turn.granted:  # left while waiting
            try:
                self.waiting.remove(turn)
            except ValueError:
                pass
            return
        if turn.started is not None:
            self.ended.append(self.clock())
            if len(self.ended) > 10_000:  # bounded, whatever the rate
                self.ended.popleft()
        if self.waiting:
            following = self.waiting.popleft()  # its slot is the one freed: running stays
            following.granted = True
            following.event.set()
            # Called once, and let go: it holds the turn (a cycle that outlived the replay).
            start, following.start = following.start, None
            if start is not None:
                start()
        else:
            self.running -= 1


class ConnectBounds:
    """A web process's bounds on connects and replays (see the module)."""

    def __init__(self, rate, burst, concurrency, queue, create_event, clock=time.monotonic,
                 sessions_per_address=0):
        self.sessions = SessionsPerAddress(sessions_per_address)  # per_address.py
        self.rate = rate
        self.bucket = TokenBucket(rate, max(1, burst or rate), clock) if rate > 0 else None
        self.schedule = RetrySchedule(clock)  # one for the process: refused for either bound
        self.clock = clock
        self.turns = ReplayTurns(concurrency, queue, create_event, clock)
        self.deferred = {"rate": 0, "replays": 0}  # connects told to retry later, by bound

    def _busy(self, bound):
        self.deferred[bound] += 1
        return Busy(bound, self.schedule.later(self.rate or self.turns.rate()))

    def admit(self, resuming=False):
        """Let one connect in, or raise :class:`Busy`: past ``rate`` a second, or, for a
        connect that will be replayed to (``resuming``), when no replay could take it
        (refused before any work is done for it: its turn is reserved later)."""
        if resuming and self.turns.full():
            raise self._busy("replays")
        if self.bucket is not None and not self.bucket.take(self.clock):
            raise self._busy("rate")

    def replay_turn(self):
        """A :class:`Turn` for one replay, or :class:`Busy` when too many wait already."""
        turn = self.turns.reserve()
        if turn is None:
            raise self._busy("replays")
        return turn

    def figures(self):
        """For /metrics (app/ops/metrics.py)."""
        return {"connects_deferred": sum(self.deferred.values()),
                "sessions_refused_per_address": self.sessions.refused,
                "connects_deferred_replays": self.deferred["replays"],
                "replays_running": self.turns.running,
                "replays_waiting": len(self.turns.waiting)}
