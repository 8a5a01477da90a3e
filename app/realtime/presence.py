"""User-level presence: a user is online while any of their connections is open,
in any web process (Socket.IO connections and event streams alike).

Each web process counts its own connections per user (:class:`Presence`) and
writes the changes to Redis, coalesced (a tab that reloads is not a leave and
a join), from a background loop:

- ``herald:{presence}:proc:<process>``: hash user -> that process's connections;
- ``herald:{presence}:where:<user>``: the set of processes holding the user;
- ``herald:{presence}:since``: hash user -> when they came online (ms);
- ``herald:{presence}:procs``: sorted set process -> its last refresh (s).

They share the hash tag ``{presence}``: the script that applies a process's
changes writes them all in one step, so on a Redis Cluster they live in one
slot (app/key_layout.py).

One Lua script applies a process's changes (or, every ``SYNC_EVERY``
seconds, its whole count, which also repairs what a Redis restart lost), so
"online" changes exactly when the first connection opens anywhere or the
last one closes everywhere; the script then publishes
``{"user", "presence": {"user", "online", "at"}}`` on ``herald:control``
(app/stream/control.py),
which every relay turns into a ``presence`` event for the connections that
asked for them. A process that dies leaves its counts behind; once its
refresh is older than ``STALE_AFTER`` seconds any other process removes
them (the same script, "reap"), and its users leave unless another process
holds them.

The where-sets are named inside the script from the user names (their prefix
is an argument); on a Redis Cluster they share the others' hash tag, so they
are in the slot the script runs in.
"""
import logging
import time
from collections import Counter

import orjson

from app.redis_client import UNAVAILABLE
from app.stream import control
from app.stream.envelope import topic_matches
from app.stream.keys import CONTROL
from app.users import subscriptions

log = logging.getLogger("herald.presence")

PROC = "herald:{presence}:proc:"
WHERE = "herald:{presence}:where:"
SINCE = "herald:{presence}:since"
PROCS = "herald:{presence}:procs"
FLUSH_EVERY = 0.25   # seconds: changes are coalesced this long
SYNC_EVERY = 10.0    # seconds between a process's full rewrites (and its refresh)
STALE_AFTER = 30.0   # seconds without a refresh before a process's counts are reaped
WATCH_ROOM = "presence"  # Socket.IO room of the connections that asked for events

# KEYS: proc hash, since hash, procs zset. ARGV: process, now (s), mode, control
# channel, where-prefix, then user, count pairs. (The where sets it reaches by name
# share the others' hash tag, so they are in the same slot on a cluster.) mode
# "delta": add the counts; "full": the counts are the whole truth (users not
# listed have none here); "reap": the process is gone (no pairs). Returns the
# users who came online, then those who went offline, as two lists.
_APPLY = control.PRESENCE_LUA + """
local proc, since, procs = KEYS[1], KEYS[2], KEYS[3]
local label, now, mode, channel = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local joined, left = {}, {}
local function where(user) return ARGV[5] .. user end
local function set_count(user, n)
  if n > 0 then
    redis.call('HSET', proc, user, n)
    if redis.call('SADD', where(user), label) == 1 and redis.call('SCARD', where(user)) == 1 then
      redis.call('HSET', since, user, math.floor(now * 1000))
      table.insert(joined, user)
    end
  else
    redis.call('HDEL', proc, user)
    if redis.call('SREM', where(user), label) == 1 and redis.call('SCARD', where(user)) == 0 then
      redis.call('HDEL', since, user)
      table.insert(left, user)
    end
  end
end
if mode == 'reap' then
  local old = redis.call('HGETALL', proc)
  for i = 1, #old, 2 do set_count(old[i], 0) end
  redis.call('DEL', proc)
  redis.call('ZREM', procs, label)
else
  local given = {}
  for i = 6, #ARGV, 2 do
    local user, n = ARGV[i], tonumber(ARGV[i + 1])
    given[user] = true
    if mode == 'delta' then n = n + tonumber(redis.call('HGET', proc, user) or '0') end
    set_count(user, n)
  end
  if mode == 'full' then
    local old = redis.call('HGETALL', proc)
    for i = 1, #old, 2 do
      if not given[old[i]] then set_count(old[i], 0) end
    end
  end
  redis.call('ZADD', procs, now, label)
end
local at = math.floor(now * 1000)
for _, user in ipairs(joined) do
  redis.call('PUBLISH', channel, control_presence(user, true, at))
end
for _, user in ipairs(left) do
  redis.call('PUBLISH', channel, control_presence(user, false, at))
end
return {joined, left}
"""


class Presence:
    """This process's connections per user, and their way into Redis."""

    def __init__(self, client, label):
        self.client = client
        self.label = label
        self.local = Counter()    # user -> connections open in this process
        self.pending = Counter()  # user -> net change not yet written
        self.synced_at = 0.0
        self.script = client.register_script(_APPLY)

    # -- called by the namespace and the event streams (no I/O) ----------------

    def opened(self, user):
        self.local[user] += 1
        self.pending[user] += 1

    def closed(self, user):
        if self.local[user] <= 1:
            del self.local[user]
        else:
            self.local[user] -= 1
        self.pending[user] -= 1

    # -- written from the background loop ---------------------------------------

    def _apply(self, label, mode, pairs, now):
        args = [label, now, mode, CONTROL, WHERE]
        for user, count in pairs:
            args += [user, count]
        joined, left = self.script(keys=[PROC + label, SINCE, PROCS], args=args)
        return [u.decode() for u in joined], [u.decode() for u in left]

    def flush(self, now=None):
        """Write the changes since the last flush (a full rewrite when a sync is due)."""
        now = time.time() if now is None else now
        if now - self.synced_at >= SYNC_EVERY:
            self.pending.clear()  # the full count covers them
            self._apply(self.label, "full", list(self.local.items()), now)
            self.synced_at = now
            return
        changes = [(u, n) for u, n in self.pending.items() if n]
        self.pending.clear()
        if changes:
            try:
                self._apply(self.label, "delta", changes, now)
            except UNAVAILABLE:
                self.pending.update(dict(changes))  # kept for the next try
                raise

    def reap(self, now=None):
        """Remove the counts of processes that stopped refreshing; returns their names."""
        now = time.time() if now is None else now
        gone = [p.decode() for p in self.client.zrangebyscore(PROCS, "-inf", now - STALE_AFTER)]
        for label in gone:
            if label != self.label:
                self._apply(label, "reap", [], now)
                log.info("presence: process %s stopped refreshing; its connections are gone", label)
        return gone

    def retire(self):
        """This process stops: its users leave unless another process holds them."""
        self._apply(self.label, "reap", [], time.time())

    def keep(self, running, sleep=time.sleep):
        """The background loop: flush every FLUSH_EVERY s, reap every SYNC_EVERY s."""
        reaped_at = 0.0
        while running():
            sleep(FLUSH_EVERY)
            try:
                self.flush()
                now = time.time()
                if now - reaped_at >= SYNC_EVERY:
                    reaped_at = now
                    self.reap(now)
            except UNAVAILABLE:
                self.synced_at = 0.0  # rewrite everything once Redis is back
            except Exception:  # a bug must not end presence for good
                log.exception("presence: writing to Redis failed")


def online(client):
    """Who is online now: ``[{"user", "since" (ms), "connections"}]`` by name."""
    since = {u.decode(): int(v) for u, v in client.hgetall(SINCE).items()}
    counts = Counter()
    for label in client.zrange(PROCS, 0, -1):
        for user, n in client.hgetall(PROC + label.decode()).items():
            counts[user.decode()] += int(n)
    return [{"user": user, "since": since[user], "connections": counts.get(user, 0)}
            for user in sorted(since)]


def shared_with(client, online_now, caller, topics):
    """The part of ``online_now`` (as :func:`online` gives it) that ``caller``, who may
    see ``topics`` (their subscriptions, or a limited token's topics), may know of:
    themselves, and every user subscribed to a topic that overlaps one of ``topics``
    (one prefix inside the other; ``*`` overlaps all). Admins see everyone instead."""
    others = [p["user"] for p in online_now if p["user"] != caller]
    with client.pipeline(transaction=False) as pipe:
        for user in others:
            pipe.smembers(subscriptions.key(user))
        theirs = dict(zip(others, pipe.execute(), strict=True))

    def overlaps(prefixes):
        return any(topic_matches(a, b) or topic_matches(b, a)
                   for a in topics for b in (p.decode() for p in prefixes))
    return [p for p in online_now if p["user"] == caller or overlaps(theirs[p["user"]])]


def by_process(client):
    """``{process: users online through it}``, for the operations console."""
    return {label.decode(): client.hlen(PROC + label.decode()) for label in client.zrange(PROCS, 0, -1)}


def snapshot_json(client):
    return orjson.dumps({"online": online(client)})
