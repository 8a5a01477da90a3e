"""Outgoing queues that keep a bound, for Herald's Engine.IO connections.

Engine.IO keeps one unbounded outgoing queue per connection; a client that
stops reading (a frozen tab, a dead link the kernel has not noticed) would
make it grow without limit. Every packet for a client is put into its
queue, so the queue is where the bound is kept: once ``limit`` packets
wait, the next one is not queued and ``overflow(queue)`` is called instead
(the server then cuts that client off, see HeraldServer.shed).

- :class:`BoundedQueue` is what ``EngineIO.create_queue`` (engine.py) (python-
  engineio's public hook) makes for every connection: gevent's queue, as
  python-engineio's own writer and long-polling need it.
- :class:`DrainingQueue` replaces it on a connection opened directly as a
  websocket (see websocket.py): a plain list with no writer greenlet
  waiting on it; a *drainer* task (a kept worker: workers.py) starts when something is put and
  ends when the list is empty. When its websocket can write several packets at
  once (``send_many``: Herald's Connection), what is queued leaves in one send.
"""
import time

import gevent
from gevent.queue import Empty, JoinableQueue

from app.realtime.wire import workers

JOIN_SECONDS = 10  # at most, for a close that waits for the queue to be written
DRAIN_MOST = 64  # packets written together by one send, at most (DrainingQueue._take)


class BoundedQueue(JoinableQueue):
    """gevent's JoinableQueue that calls ``overflow(self)`` instead of growing past ``limit``."""

    def __init__(self, limit, overflow):
        super().__init__()
        self.limit = limit
        self.overflow = overflow

    def put(self, item, block=True, timeout=None):
        if item is not None and self.qsize() >= self.limit:
            self.overflow(self)
            return
        super().put(item, block, timeout)

    def clear(self):
        """Drop everything waiting (its memory is freed at once)."""
        while not self.empty():
            self.get_nowait()
            self.task_done()

    def last(self):
        """The packet queued last, or None (gevent keeps the items in ``queue``, a deque)."""
        return self.queue[-1] if self.queue else None


class DrainingQueue:
    """A websocket connection's outgoing queue that starts its drainer when given something.

    Only the part of gevent's JoinableQueue that python-engineio and Herald
    use on such a connection (a gevent queue costs some 2.5 KiB, an empty
    list 56 bytes; what waits here is a few packets at most, so ``pop(0)``
    is cheap). ``get`` never blocks: only long-polling would wait on it.
    ``ws`` is the websocket (``send`` a packet's encoding, ``close``);
    ``server`` has the bound (``max_queue``) and ``overflow``. Nothing else
    is kept per connection: at thousands of idle ones, every object counts.
    """

    __slots__ = ("queue", "drainer", "ws", "server")

    def __init__(self, items, ws, server):
        self.queue = []
        self.drainer = None
        self.ws = ws
        self.server = server
        for item in items:
            self.put(item)

    def put(self, item, block=True, timeout=None):
        if self.ws is None:  # closed: nothing is written any more
            return
        if item is not None and len(self.queue) >= self.server.max_queue:
            self.server.overflow(self)
            return
        self.queue.append(item)
        if self.drainer is None:
            self.drainer = workers.spawn(self._drain)

    put_nowait = put

    def get_nowait(self):
        try:
            return self.queue.pop(0)
        except IndexError:
            raise Empty() from None

    def get(self, block=True, timeout=None):
        return self.get_nowait()

    def qsize(self):
        return len(self.queue)

    def empty(self):
        return not self.queue

    def clear(self):
        self.queue.clear()

    def last(self):
        return self.queue[-1] if self.queue else None

    def task_done(self):
        pass

    def close(self):
        """The connection is over: drop what waits, and the reference to the websocket.
        That reference closes a cycle (websocket -> Engine.IO socket -> this queue
        -> websocket) that only the cyclic collector would free otherwise, and
        wsgi.py has it run a full collection rarely: every ended connection
        stayed in memory (issue 35: +0.75-1.5 KB per dropped websocket)."""
        self.queue.clear()
        self.ws = None

    def join(self, timeout=JOIN_SECONDS):
        """Wait (a bounded time) until what is queued has been written."""
        deadline = time.monotonic() + timeout
        while (self.queue or self.drainer is not None) and time.monotonic() < deadline:
            gevent.sleep(0.01)

    def _take(self):
        """The encodings of the packets at the head of the queue, up to the first
        ``None`` (a close, left queued) and at most DRAIN_MOST: what the drainer
        writes in one send (a reconnect's ack, replayed page and ``replayed``; a
        slow reader's backlog), one system call and segment for them all."""
        queue, taken = self.queue, []
        while queue and queue[0] is not None and len(taken) < DRAIN_MOST:
            taken.append(queue.pop(0).encode())
        return taken

    def _drain(self):
        queue, ws = self.queue, self.ws
        if ws is None:
            self.drainer = None
            return
        send_many = getattr(ws, "send_many", None)
        try:
            while queue:
                if send_many is not None and len(queue) > 1 and queue[0] is not None:
                    send_many(self._take())
                    continue
                pkt = queue.pop(0)
                if pkt is None:  # the connection is closing
                    queue.clear()
                    ws.close()
                    return
                ws.send(pkt.encode())
        except Exception:  # the peer is gone: python-engineio's writer also just closes
            ws.close()
        finally:
            self.drainer = None
