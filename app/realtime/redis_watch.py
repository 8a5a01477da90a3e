"""``RedisWatch``: whether this web process reaches Redis, told to its browsers.

The relay's subscription does not notice a Redis that stopped answering
(paused, or a link that drops packets): an idle pub/sub connection is normal,
so it stays open and quiet. One greenlet per process therefore asks Redis a
PING every PROBE_EVERY seconds and waits at most PROBE_WAIT for the answer
(the PING itself runs in a task of its own, at most one at a time, so a hung
socket never holds the watch up); the relay's follower losing its
subscription counts too. When the verdict changes it is logged once and
emitted once to the whole ``/notifications`` namespace as ``status``
``{"redis": "down"|"up", "since": ms}``: one broadcast per change, never a
Redis call per client, and nothing on the per-notification path. A client
that connects while Redis is down hears it right after its connect
(namespace.py). Pages answer at once while it is down (app/web/pages), and a
request that met an outage calls :meth:`suspect`, so the next PING goes now.

    watch = RedisWatch(sio, follower)
    sio.start_background_task(watch.run, lambda: running)
    watch.down, watch.payload()  # False, {"redis": "up", "since": ...}
"""
import logging
import time

from app.realtime.rooms import NAMESPACE
from app.redis_client import UNAVAILABLE

log = logging.getLogger("herald.redis_watch")

PROBE_EVERY = 1.0  # seconds between PINGs
PROBE_WAIT = 2.0   # seconds a PING may take before Redis counts as unreachable


def now_ms():
    return int(time.time() * 1000)


class RedisWatch:
    """Keeps ``down`` (and ``since``, ms) for this process and broadcasts its changes."""

    def __init__(self, sio, follower, every=PROBE_EVERY, wait=PROBE_WAIT):
        """``sio``: the HeraldServer (tasks, events, the broadcast); ``follower``: the
        relay's LiveFollower, whose ``client`` is pinged and whose lost subscription
        also means down."""
        self.sio = sio
        self.follower = follower
        self.every, self.wait = every, wait
        self.down = False
        self.since = now_ms()
        self.changes = 0  # how often the verdict changed
        self._ping = None  # (event, outcome) of the PING in flight, if any
        self.reason = None  # why the last probe failed, for the log
        self._nudge = None  # set by suspect(): PING now (made when run() starts)

    def payload(self):
        """What ``status`` carries: ``{"redis": "down"|"up", "since": ms}``."""
        return {"redis": "down" if self.down else "up", "since": self.since}

    def suspect(self):
        """Something just met an unreachable Redis: PING now rather than at the next tick
        (once known down it PINGs every round anyway: a flood of 503s adds no PINGs)."""
        if self._nudge is not None and not self.down:
            self._nudge.set()

    def run(self, running):
        """PING and judge while ``running()`` is true (a background task of the relay)."""
        self._nudge = self.sio.eio.create_event()
        while running():
            self.judge(self.probe())
            self._nudge.wait(self.every)
            self._nudge.clear()

    def probe(self):
        """True when Redis answered a PING within ``wait`` seconds and the follower,
        once it has followed at all, is subscribed. A PING still out after the
        wait is waited for again on the next round, never sent twice."""
        if self._ping is None:
            done, outcome = self.sio.eio.create_event(), {}
            self._ping = (done, outcome)
            self.sio.start_background_task(self._send_ping, done, outcome)
        done, outcome = self._ping
        if not done.wait(self.wait):
            self.reason = f"no answer to PING within {self.wait:g} s"
            return False
        self._ping = None
        self.reason = outcome.get("error")
        follower = self.follower
        following = follower.connected or follower.reconnects == 0  # 0: not started yet
        return outcome.get("ok", False) and following

    def _send_ping(self, done, outcome):
        try:
            outcome["ok"] = bool(self.follower.client.ping())
        except UNAVAILABLE as exc:
            outcome["error"] = exc
        except Exception as exc:  # a bug must not stop the watch: say so, count as down
            log.exception("PING failed unexpectedly")
            outcome["error"] = exc
        finally:
            done.set()

    def judge(self, reachable):
        """Record the verdict; on a change, log it and tell every connected client."""
        if reachable != self.down:
            return
        self.down = not reachable
        self.since = now_ms()
        self.changes += 1
        if self.down:
            log.warning("Redis is unreachable from this process (%s); telling its browsers",
                        self.reason or "the relay lost its subscription")
        else:
            log.info("Redis answers again; telling this process's browsers")
        self.sio.emit("status", self.payload(), namespace=NAMESPACE)
