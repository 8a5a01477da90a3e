"""``Workers``: greenlets kept and reused for Herald's short tasks, instead of a new one each.

A new greenlet costs this machine's Python 3.11 some 37 µs of CPU from
``gevent.spawn`` to its end (17 µs of it greenlet's own: every new greenlet
maps a fresh data stack and unmaps it at its end), against about 6 µs to hand
the same function to a greenlet already waiting. A reconnect starts about
seven (the handler's dispatch, the batched read, the replay, the drainer, the
finish, the drainer's close) and every packet a client sends one more, so
the transport's tasks go to :meth:`Workers.spawn` (docs/capacity.md has
the figures).

A task runs as it would in a greenlet of its own:

- it starts when ``gevent.spawn``'s would: from the hub's callbacks, in the
  order the tasks were given;
- it runs in a fresh :class:`contextvars.Context` (a new greenlet starts with
  an empty one), so what one task set there (a log's correlation id, Flask's
  application context) is not seen by the next;
- an exception it raises is logged, with its traceback, and the worker goes
  on to the next task;
- :meth:`Task.join` waits (``timeout`` bounded, when given) for it to end.

Workers that find nothing to do wait for more, at most ``IDLE_MOST`` of
them; one past that ends. A ``gevent.Timeout`` a task started and left
running can fire in a later task of the same worker, as it would in whatever a
greenlet did next; one that fires while the worker waits is logged and
dropped. Only the hub the first task ran on is served this way: a task given
from another thread's hub gets a greenlet of its own there.
"""
import contextvars
import logging

import gevent
from gevent.event import Event
from greenlet import getcurrent

log = logging.getLogger(__name__)

IDLE_MOST = 16  # workers kept waiting at most: ~9 KiB each when parked (~1 MiB at 64)


class Task:
    """One function to run, and whether it has ended (:meth:`join` waits for that)."""

    __slots__ = ("function", "args", "kwargs", "ended", "event", "worker")

    def __init__(self, function, args, kwargs):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.ended = False
        self.event = None  # made by the first join that has to wait
        self.worker = None  # the greenlet running it, once it runs

    def run(self):
        self.worker = getcurrent()
        try:
            contextvars.Context().run(self.function, *self.args, **self.kwargs)
        except Exception:
            log.exception("task %s failed", getattr(self.function, "__qualname__", self.function))
        finally:
            self.function = self.args = self.kwargs = self.worker = None  # nothing kept alive
            self.ended = True
            if self.event is not None:
                self.event.set()

    def join(self, timeout=None):
        """Wait until the task has ended, or ``timeout`` seconds; True when it has."""
        if not self.ended:
            if self.event is None:
                self.event = Event()
            self.event.wait(timeout)
        return self.ended

    def kill(self, block=True, timeout=None):
        """End the task as ``Greenlet.kill`` would: not started, it never runs; running,
        its worker is killed (``GreenletExit`` raised where it waits) and ends with it."""
        if self.ended:
            return
        if self.worker is None:
            self.function, self.args, self.kwargs = _nothing, (), {}
        else:
            self.worker.kill(block=block, timeout=timeout)

    @property
    def dead(self):
        """As a greenlet's: the task has ended."""
        return self.ended


def _nothing():
    """What a task killed before it started runs."""


class Workers:
    """The waiting workers of one hub; :meth:`spawn` gives a task to one of them."""

    def __init__(self, idle_most=IDLE_MOST):
        self.idle = []  # workers waiting for a task, the last to have waited on top
        self.idle_most = idle_most
        self.hub = None
        self.started = 0  # workers ever started (for the tests and the curious)

    def spawn(self, function, *args, **kwargs):
        """Run ``function(*args, **kwargs)`` in a worker soon; a :class:`Task` to join."""
        task = Task(function, args, kwargs)
        hub = gevent.get_hub()
        if self.hub is None:
            self.hub = hub
        if hub is not self.hub:  # another thread's hub
            gevent.spawn(task.run)
        elif self.idle:
            hub.loop.run_callback(self.idle.pop().switch, task)
        else:
            self.started += 1
            gevent.spawn(self._work, task)
        return task

    def _work(self, task):
        me, hub, idle = getcurrent(), self.hub, self.idle
        while True:
            task.run()
            task = None
            if len(idle) >= self.idle_most:
                return
            idle.append(me)
            while task.__class__ is not Task:  # (while idle, only spawn switches here)
                try:
                    task = hub.switch()
                except gevent.Timeout as late:  # started by a task, never cancelled
                    log.warning("a timeout a task left running fired in its worker: %r", late)
                except gevent.GreenletExit:  # killed while waiting
                    if me in idle:
                        idle.remove(me)
                    return


WORKERS = Workers()
spawn = WORKERS.spawn
