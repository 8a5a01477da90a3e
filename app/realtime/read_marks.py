"""Marking read, coalesced: a user's ``read`` events that arrive together (tabs, a
burst) become one Redis transaction, and each is acknowledged with the change
that was applied.

"Read" here is the user's read state (app/users/read_state.py: read,
unread, all read up to, seen), not a read from Redis (those are
batched_reads.py's).
"""
from app.redis_client import UNAVAILABLE
from app.stream.envelope import id_key
from app.users import read_state
from app.web.auth import scope


class _Batch:
    __slots__ = ("ids", "upto", "unread", "seen", "done", "change", "error")

    def __init__(self, event):
        self.ids, self.upto, self.unread, self.seen = set(), None, set(), None
        self.done, self.change, self.error = event, None, None


class ReadMarks:
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

    def answer(self, user, limit, args):
        """The acknowledgement of a ``read`` event of ``user`` (None: not connected) whose
        token limits it to the prefixes ``limit`` (None: not limited), with its
        ``args``. A limited token may not move ``upto`` or ``seen`` (account-wide
        watermarks), and may name only ids it may see (scope.check_read)."""
        if user is None:
            return {"ok": False, "error": "not connected"}
        if len(args) != 1:
            return {"ok": False, "error": 'payload: must be one object, with any of '
                                          '{"ids": [...], "upto": id, "unread": [...], "seen": id}'}
        try:
            scope.check_read(self.client, user, limit, args[0])
            state = self.mark(user, args[0])
        except (scope.OutOfScope, read_state.ReadStateError) as exc:
            return {"ok": False, "error": str(exc)}
        except UNAVAILABLE:
            return {"ok": False, "error": "Redis is unreachable; nothing was changed, try again"}
        return dict(state, ok=True)

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
