"""Deadlines for many connections, kept by one task: when a token expires, its
connection ends.

Every Socket.IO connection was opened with a credential that expires (a
host-app JWT's ``exp``, a Herald token's ``TOKEN_TTL``). A task per
connection waiting for that moment costs a greenlet each, thousands of them;
here one heap holds every deadline and one task, alive only while any is
pending, sleeps until the next one is due. An entry whose connection closed
first is dropped when it comes due (``action`` sees it is gone).
"""
import heapq
import time


class Deadlines:
    """Calls ``action(item)`` at ``at`` (UNIX seconds) for each ``add(item, at)``."""

    NAP_MAX = 1.0  # seconds: a deadline added meanwhile waits at most this past its time

    def __init__(self, action, spawn, sleep, clock=time.time):
        self.action, self.spawn, self.sleep, self.clock = action, spawn, sleep, clock
        self.heap = []  # (at, sequence, item)
        self.added = 0
        self.running = False

    def add(self, item, at):
        self.added += 1
        heapq.heappush(self.heap, (at, self.added, item))
        if not self.running:
            self.running = True
            self.spawn(self._run)

    def _run(self):
        try:
            while self.heap:
                now = self.clock()
                while self.heap and self.heap[0][0] <= now:
                    _at, _n, item = heapq.heappop(self.heap)
                    self.action(item)
                if self.heap:
                    self.sleep(min(self.NAP_MAX, max(0.0, self.heap[0][0] - self.clock())))
        finally:
            self.running = False
