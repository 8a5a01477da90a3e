"""Worker heartbeats: which workers are alive, where every web process sees it.

Every worker process (bridge, archiver, digest, webhooks; as many of each as
run) beats every ``HEARTBEAT_INTERVAL`` seconds (default 5) from a thread of
its own: one field of the hash ``herald:workers:beats``,
``"<role>/<host>:<pid>" -> {"role", "instance", "at", "every", "started",
"details"}``, ``details`` being what the worker wants an operator to see (an
archiver's position, a bridge's backlog). A worker that stops cleanly
removes its field. One that dies (SIGKILL, a lost host) leaves it behind,
and readers call it **missing** once it is older than its interval plus
``GRACE`` seconds: the operations console turns it red and ``/readyz`` fails
on processes that need that role (``READY_REQUIRES``). A missing beat is
forgotten after ``FORGET_AFTER`` seconds.

The beat runs in a thread, not the worker's loop, so a worker busy with a
long SMTP exchange is not called dead; ``details`` may carry the loop's own
progress (``"progress_at"``) for a loop that hangs. Beating never raises:
a heartbeat must not become a fault of its own.
"""
import logging
import os
import socket
import threading
import time

import orjson

from app.redis_client import UNAVAILABLE
from app.settings import WORKER_ROLES, get

log = logging.getLogger("herald.heartbeats")

BEATS = "herald:workers:beats"
GRACE = 2.0              # seconds past its interval before a beat is missing
FORGET_AFTER = 3600.0    # seconds after which a missing beat is dropped
DEFAULT_INTERVAL = 5.0


def interval():
    """``HEARTBEAT_INTERVAL`` in seconds (default 5, at least 0.2)."""
    return get("HEARTBEAT_INTERVAL")


def instance_name():
    return f"{socket.gethostname()}:{os.getpid()}"


class Heartbeat:
    """Beats for one worker process of ``role`` until ``stop()``.

    ``details`` is a callable returning a JSON-able dict, called at each beat
    (from the heartbeat thread: keep it cheap and thread-safe, e.g. reading
    attributes the worker sets).
    """

    def __init__(self, client, role, details=None, every=None, instance=None):
        self.client = client
        self.role = role
        self.details = details or dict
        self.every = every if every is not None else interval()
        self.instance = instance or instance_name()
        self.field = f"{role}/{self.instance}"
        self.started = time.time()
        self._stopped = threading.Event()
        self._thread = None

    def beat(self):
        """Write one beat now; False when Redis did not take it."""
        try:
            details = self.details()
        except Exception:  # a details callable must not stop the beat
            log.exception("heartbeat details of %s failed", self.field)
            details = {}
        record = {"role": self.role, "instance": self.instance, "at": time.time(),
                  "every": self.every, "started": self.started, "details": details}
        try:
            self.client.hset(BEATS, self.field, orjson.dumps(record))
            return True
        except UNAVAILABLE:
            return False

    def start(self):
        self.beat()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat {self.role}", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stopped.wait(self.every):
            self.beat()

    def stop(self):
        """Stop beating and remove this worker's beat: a clean stop is not a death."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(self.every + 1)
        try:
            self.client.hdel(BEATS, self.field)
        except UNAVAILABLE:
            pass


def read(client, now=None):
    """Every worker's last beat, each with ``alive`` (bool) and ``age`` (seconds),
    sorted by role then instance; beats missing longer than FORGET_AFTER are dropped."""
    now = time.time() if now is None else now
    beats, forget = [], []
    for field, raw in client.hgetall(BEATS).items():
        try:
            record = orjson.loads(raw)
            age = now - float(record["at"])
            every = float(record.get("every") or DEFAULT_INTERVAL)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            forget.append(field)
            continue
        if age > FORGET_AFTER:
            forget.append(field)
            continue
        record["age"] = round(max(age, 0.0), 3)
        record["alive"] = age <= every + GRACE
        beats.append(record)
    if forget:
        client.hdel(BEATS, *forget)
    return sorted(beats, key=lambda b: (b["role"], b["instance"]))


def missing_roles(beats, required):
    """Of the ``required`` roles, those with no live instance: ``{role: reason}``."""
    reasons = {}
    for role in required:
        mine = [b for b in beats if b["role"] == role]
        if any(b["alive"] for b in mine):
            continue
        if mine:
            worst = min(mine, key=lambda b: b["age"])
            reasons[role] = (f"no {role} is alive: the last heartbeat ({worst['instance']}) "
                             f"was {worst['age']:.0f} s ago")
        else:
            reasons[role] = f"no {role} has ever sent a heartbeat"
    return reasons


def required_roles():
    """``READY_REQUIRES``: the worker roles without which this process is not ready
    (comma-separated, from bridge, archiver, digest, webhooks; default none)."""
    return list(get("READY_REQUIRES"))


ROLES = WORKER_ROLES
