"""What one connection may ask of a web process: a budget of messages, and coalesced reads.

A signed-in client can send Socket.IO messages as fast as its link allows;
each costs a greenlet and, for ``read``, a Redis transaction. Unchecked, one
connection sending 100,000 ``read`` events in a few seconds exhausted the
Redis pool (a REST publish then waited 14 s), starved everyone else and grew
the process by 800 MB it kept.

- :class:`TokenBucket`: each connection may send ``rate`` messages a second,
  in bursts of up to ``burst``; one past that is refused before any work is
  done for it, and the connection is cut off (HeraldServer counts it).
- :class:`ReadCoalescer`: ``read`` events of one user that arrive together
  (tabs, a burst) become one Redis transaction; each is acknowledged with the
  change that was applied.
"""
import time

from app.stream.envelope import id_key
from app.users import read_state


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up; ``take()`` spends one."""

    __slots__ = ("rate", "burst", "tokens", "at")

    def __init__(self, rate, burst, clock=time.monotonic):
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.at = clock()

    def take(self, clock=time.monotonic):
        """True when a token was left (and is now spent)."""
        now = clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class _Batch:
    __slots__ = ("ids", "upto", "unread", "seen", "done", "change", "error")

    def __init__(self, event):
        self.ids, self.upto, self.unread, self.seen = set(), None, set(), None
        self.done, self.change, self.error = event, None, None


class ReadCoalescer:
    """Merges a user's read-state changes made at the same moment into one transaction.

    ``spawn(function, *args)`` runs a function in a greenlet of its own;
    ``event()`` makes an event to wait on (the server's own kinds, so this
    works under gevent and in threads alike).
    """

    def __init__(self, client, spawn, event):
        self.client = client
        self.spawn = spawn
        self.event = event
        self.pending = {}  # user -> _Batch being gathered
        self.transactions = 0

    def mark(self, user, data):
        """Apply ``data`` (``{"ids"}``, ``{"upto"}``, ``{"unread"}``) for ``user`` with whatever
        else arrives before the write; returns the change applied. Raises
        ReadStateError for bad data, a Redis error when the write failed."""
        ids, upto, unread, seen = read_state.parse(data)
        batch = self.pending.get(user)
        if batch is None:
            batch = self.pending[user] = _Batch(self.event())
            self.spawn(self._write, user)
        batch.ids.update(ids)
        batch.unread.update(unread)
        if upto is not None and (batch.upto is None or id_key(upto) > id_key(batch.upto)):
            batch.upto = upto
        if seen is not None and (batch.seen is None or id_key(seen) > id_key(batch.seen)):
            batch.seen = seen
        batch.done.wait()
        if batch.error is not None:
            raise batch.error
        return batch.change

    def _write(self, user):
        batch = self.pending.pop(user)
        try:
            self.transactions += 1
            batch.change = read_state.apply(self.client, user, sorted(batch.ids), batch.upto,
                                            sorted(batch.unread), batch.seen)
        except Exception as exc:  # handed to every waiter, who answers its client
            batch.error = exc
        finally:
            batch.done.set()
