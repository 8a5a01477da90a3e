"""The Redis reads of connections opening at the same moment, sent together.

Every Socket.IO connect reads its user (``HMGET``: does the token's user
still exist, with which token key) and its subscriptions (``SMEMBERS``), and
a herald.js client asks for its subscription list again once connected. One
at a time, each read is a round trip of its own through redis-py: a
connection taken from the pool and checked for stray data (a ``poll``),
the command sent, the reply read. In a reconnect storm thousands of
connects come at once, and those per-read costs were a third of the
restarted process's time while it was taking them back (bench/RESULTS.md).

:class:`BatchedReads` stands in for the Redis client where a connect reads:
a read waits for the others made in the same turn of the loop, and all of
them go to Redis in one pipeline (not a transaction: each is the same read
it was alone, made no earlier than it was asked for). One connect alone
waits for nothing but its own round trip. A failure reaches every reader
of that batch, as the same error a read of its own would have raised.

A connect asks for its subscriptions (:meth:`BatchedReads.ask`) as soon as
its token names the user, before it waits for the user's record: both go in
the same pipeline, one round trip where they were two.

Reads that every connect makes alike (the stream's state, which each replay
needs) are made once for all who ask in the same turn: in the pipeline with
the users and subscriptions (``ask(..., once=name)``: a reconnect's reads are
one round trip), or by themselves (:meth:`BatchedReads.shared`) for a replay
that starts later, made after the last of its askers asked.
"""
import threading

MOST = 512  # reads in one pipeline; past it the next ones start another


class _Batch:
    __slots__ = ("calls", "once", "results", "error", "done", "sealed")

    def __init__(self, done):
        self.calls = []
        self.once = {}  # name -> the index of a read asked once for the whole batch
        self.results = None
        self.error = None
        self.done = done
        self.sealed = False


class Asked:
    """A read asked of :meth:`BatchedReads.ask`; ``args`` what it was asked with."""

    __slots__ = ("batch", "index", "args")

    def __init__(self, batch, index, args):
        self.batch, self.index, self.args = batch, index, args

    def result(self):
        """The read's answer, once its pipeline is back; raises its error, or the batch's."""
        batch = self.batch
        batch.done.wait()
        if batch.error is not None:
            raise batch.error
        result = batch.results[self.index]
        if isinstance(result, Exception):
            raise result
        return result


class BatchedReads:
    """The read commands a connect makes (``hmget``, ``smembers``), batched.

    ``spawn(function, *args)`` runs a function in a greenlet (or thread) of its
    own; ``event()`` makes an event to wait on: the server's own kinds.
    """

    def __init__(self, client, spawn, event, most=MOST):
        self.client = client
        self.spawn = spawn
        self.event = event
        self.most = most
        self.pending = None  # the _Batch being gathered
        self.sharing = {}  # name -> the _Batch of a shared read being gathered
        self.lock = threading.Lock()  # only ever contended with threads (the tests' mode)
        self.batches = 0
        self.reads = 0

    @classmethod
    def unbatched(cls, client):
        """Reads made at once, each on its own, as ``client`` itself would make them
        (for a namespace built with no server to spawn on: the tests')."""
        return cls(client, lambda function, *args: function(*args), threading.Event)

    def hmget(self, key, *fields):
        return self._read("hmget", key, *fields)

    def smembers(self, key):
        return self._read("smembers", key)

    def ask(self, command, *args, once=None):
        """A read sent with this moment's others, not waited for: its :class:`Asked`,
        whose ``result()`` waits for the answer (so that a connect's next read, asked
        before it waits, goes in the same pipeline). ``once``: a name for a read that
        is the same for everyone (the stream's state): made once in the pipeline,
        its answer shared by all who asked for it there."""
        with self.lock:
            batch = self.pending
            new = batch is None or batch.sealed or len(batch.calls) >= self.most
            if new:
                batch = self.pending = _Batch(self.event())
            index = batch.once.get(once) if once is not None else None
            if index is None:
                index = len(batch.calls)
                batch.calls.append((command, args))
                if once is not None:
                    batch.once[once] = index
        if new:  # (outside the lock: an unbatched spawn runs it here and now)
            self.spawn(self._send, batch)
        return Asked(batch, index, args)

    def shared(self, name, read):
        """``read(client)``, made once for every caller asking for ``name`` in this
        turn of the loop, after the last of them asked; its answer is theirs."""
        with self.lock:
            batch = self.sharing.get(name)
            new = batch is None
            if new:
                batch = self.sharing[name] = _Batch(self.event())
        if new:  # (outside the lock: an unbatched spawn runs it here and now)
            self.spawn(self._share, name, batch, read)
        batch.done.wait()
        if batch.error is not None:
            raise batch.error
        return batch.results

    def _share(self, name, batch, read):
        with self.lock:
            if self.sharing.get(name) is batch:
                del self.sharing[name]
        try:
            self.batches += 1
            batch.results = read(self.client)
        except Exception as exc:  # handed to every caller
            batch.error = exc
        finally:
            batch.done.set()

    def _read(self, command, *args):
        return self.ask(command, *args).result()

    def _send(self, batch):
        with self.lock:
            batch.sealed = True
            if self.pending is batch:
                self.pending = None
        try:
            self.batches += 1
            self.reads += len(batch.calls)
            with self.client.pipeline(transaction=False) as pipe:
                for command, args in batch.calls:
                    getattr(pipe, command)(*args)
                batch.results = pipe.execute(raise_on_error=False)
        except Exception as exc:  # handed to every reader, who answers its own client
            batch.error = exc
        finally:
            batch.done.set()
