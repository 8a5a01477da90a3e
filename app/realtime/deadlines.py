"""Deadlines for many connections, kept by one task: when a token expires, its
connection ends.

Every Socket.IO connection was opened with a credential that expires (a
host-app JWT's ``exp``, a Herald token's ``TOKEN_TTL``). A task per
connection waiting for that moment costs a greenlet each, thousands of them;
here one heap holds every deadline and one task, alive only while any is
pending, sleeps until the next one is due. An entry whose connection closed
first is cancelled: dropped when it comes due, and the heap rebuilt without
the cancelled once they are most of it (left until due, every session that
ended kept ~200 bytes here for its token's life, up to a day: 100,000 of
them after 100,000 churned sessions, found by bench/churn.py, issue 35).
"""
import heapq
import time


class Deadlines:
    """Calls ``action(item)`` at ``at`` (UNIX seconds) for each ``add(item, at)``."""

    NAP_MAX = 1.0  # seconds: a deadline added meanwhile waits at most this past its time

    def __init__(self, action, spawn, sleep, clock=time.time):
        self.action, self.spawn, self.sleep, self.clock = action, spawn, sleep, clock
        self.heap = []  # (at, sequence, item)
        self.pending = {}  # item -> the sequence of its entry in the heap
        self.added = 0
        self.running = False

    def add(self, item, at):
        self.added += 1
        self.pending[item] = self.added
        heapq.heappush(self.heap, (at, self.added, item))
        if not self.running:
            self.running = True
            self.spawn(self._run)

    def cancel(self, item):
        """``item`` needs no deadline any more (its connection ended)."""
        if self.pending.pop(item, None) is not None and len(self.heap) > 2 * len(self.pending) + 64:
            self.heap = [entry for entry in self.heap if self.pending.get(entry[2]) == entry[1]]
            heapq.heapify(self.heap)

    def _run(self):
        try:
            while self.heap:
                now = self.clock()
                while self.heap and self.heap[0][0] <= now:
                    _at, n, item = heapq.heappop(self.heap)
                    if self.pending.get(item) == n:
                        del self.pending[item]
                        self.action(item)
                if self.heap:
                    self.sleep(min(self.NAP_MAX, max(0.0, self.heap[0][0] - self.clock())))
        finally:
            self.running = False
