"""What a user did with a notification besides reading it: archived it, or snoozed it.

Both are the user's, shared by all their tabs and kept in Redis under the
user's hash tag (app/key_layout.py):

- ``herald:{u:<user>}:archived``: archived ids (zero-padded, scored by when);
  an archived notification leaves the feed and is kept under "Archived";
- ``herald:{u:<user>}:snoozed``: snoozed ids, scored by the time (ms) they
  come back. The shared schedule ``herald:snoozes`` (app/users/snooze_schedule.py)
  indexes everyone's, and every web process's waker watches it (:func:`wake_due`):
  at that time the notification comes back, unread, in every tab, even after a restart.

Each change is announced on ``herald:control``, in the transaction that makes
it; every web process passes it to the user's connections as a ``state``
event, ``{"archived": [...], "unarchived": [...], "snoozed": {id: until_ms},
"unsnoozed": [...]}`` (only the keys that changed).

On a Redis Cluster the schedule is in another hash slot than the user's set,
so a snooze is two steps, each atomic: the schedule first, then the user's set
with the announcement (unsnoozing: the other way round). The user's set is the
truth; the schedule may hold a member with nothing behind it, which the waker
drops (snooze_schedule.py says how each half-done step is repaired).

Only ids already given may be archived or snoozed: not above the newest
notification of their shard (a sharded history, app/stream/shards.py: ``<ms>-<seq>-<k>``
is in shard k; read_state.given). Members keep the shard (read_state.pad).
"""
import logging
import time

from app.key_layout import user_tag
from app.redis_client import UNAVAILABLE
from app.stream import control
from app.stream.envelope import EnvelopeError, check_stream_id
from app.stream.keys import CONTROL
from app.users import read_state
from app.users import snooze_schedule as schedule
from app.users.announce import announce
from app.users.read_state import given, newest_of_shards, pad, unpad

log = logging.getLogger(__name__)

SNOOZES = schedule.KEY
MAX_KEPT = 10_000  # archived ids kept per user (the oldest go first)
MAX_SNOOZE_DAYS = 366
WAKE_EVERY = 1.0  # seconds between a web process's looks for snoozes that are due
CLAIM_MS = 30_000  # a waker's hold on a due snooze; one that died is woken again after it

# Take a woken snooze out of the user's set (KEYS[1]) and announce it, only while
# it still comes back at the time the waker saw (snoozed again meanwhile, it stays
# snoozed). ARGV: member, that time, the control channel, the announcement.
_TAKE_BACK = """
if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1])) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('PUBLISH', ARGV[3], ARGV[4])
  return 1
end
return 0
"""


class StateError(ValueError):
    """A malformed archive or snooze request; ``field`` names the field (``archive[2]``,
    ``snooze.until``), ``str(e)`` explains."""

    def __init__(self, field, rule):
        super().__init__(f"{field}: {rule}")
        self.field = field

    @classmethod
    def of(cls, exc):
        """The StateError for an EnvelopeError about one id."""
        return cls(exc.field, exc.rule)


def _archived(user):
    return f"herald:{user_tag(user)}:archived"


def _snoozed(user):
    return f"herald:{user_tag(user)}:snoozed"


def keys_of(user):
    """The keys of ``user``'s archived and snoozed ids (app.users.purge removes them)."""
    return [_archived(user), _snoozed(user)]


def forget_snoozes(client, user):
    """Take ``user``'s snoozes out of the shared schedule, so none wakes for them."""
    schedule.forget(client, user)


def _announce(pipe, key, user, change):
    announce(pipe, key, control.state(user, change))


def check_ids(ids, field="ids", most=500):
    if not isinstance(ids, list) or not 1 <= len(ids) <= most:
        raise StateError(field, f"must be a list of 1-{most} notification ids")
    try:
        for index, entry_id in enumerate(ids):
            check_stream_id(entry_id, f"{field}[{index}]")
    except EnvelopeError as exc:
        raise StateError.of(exc) from None
    return list(dict.fromkeys(ids))


def get(client, user):
    """``{"archived": [ids], "snoozed": {id: until_ms}}``, ids in id order."""
    archived = [unpad(m) for m in client.zrange(_archived(user), 0, -1)]
    snoozed = {unpad(m): int(until) for m, until in
               client.zrange(_snoozed(user), 0, -1, withscores=True)}
    return {"archived": archived, "snoozed": snoozed}


def hidden(client, user, now_ms=None):
    """The ids kept out of ``user``'s feed now: archived, or snoozed until later."""
    now_ms = now_ms or int(time.time() * 1000)
    with client.pipeline(transaction=False) as pipe:
        pipe.zrange(_archived(user), 0, -1)
        pipe.zrangebyscore(_snoozed(user), f"({now_ms}", "+inf")
        archived, snoozed = pipe.execute()
    return {unpad(m) for m in archived}, {unpad(m) for m in snoozed}


def archive(client, user, ids, archived=True):
    """Archive (or with ``archived=False`` bring back) ``ids``; returns the change."""
    ids = check_ids(ids, "archive" if archived else "unarchive")
    if archived:  # not what is yet to be published (read_state.py has the same bound)
        newest = newest_of_shards(client, ids)
        ids = [i for i in ids if given(newest, i)]
        if not ids:
            return {"archived": []}  # nothing applied: nothing to write or announce
    now = int(time.time() * 1000)
    key = _archived(user)
    with client.pipeline(transaction=True) as pipe:
        if archived:
            pipe.zadd(key, {pad(i): now for i in ids})
            pipe.zremrangebyrank(key, 0, -MAX_KEPT - 1)
            change = {"archived": ids}
        else:
            pipe.zrem(key, *[pad(i) for i in ids])
            change = {"unarchived": ids}
        _announce(pipe, key, user, change)
        pipe.execute()
    return change


def parse_until(value, now_ms=None, field="snooze.until"):
    """A snooze's end: milliseconds since the epoch, in the future, within a year."""
    now_ms = now_ms or int(time.time() * 1000)
    if not isinstance(value, int) or isinstance(value, bool):
        raise StateError(field, "must be a time in milliseconds since 1970 (UTC)")
    if not now_ms < value <= now_ms + MAX_SNOOZE_DAYS * 86_400_000:
        raise StateError(field, f"must be in the future, at most {MAX_SNOOZE_DAYS} days ahead")
    return value


def snooze(client, user, entry_id, until_ms):
    """Hide ``entry_id`` (one id, or a list of 1-500) from ``user``'s feed until
    ``until_ms``; returns the change."""
    field = "snooze.ids" if isinstance(entry_id, list) else "snooze.id"
    ids = _one_or_many(entry_id, field)
    until_ms = parse_until(until_ms)
    newest = newest_of_shards(client, ids)
    if not all(given(newest, i) for i in ids):
        raise StateError(field, "is newer than any notification")
    change = {"snoozed": {i: until_ms for i in ids}}
    schedule.add(client, user, ids, until_ms)  # first: the schedule never misses a snooze
    with client.pipeline(transaction=True) as pipe:
        pipe.zadd(_snoozed(user), {pad(i): until_ms for i in ids})
        _announce(pipe, _snoozed(user), user, change)
        pipe.execute()
    return change


def unsnooze(client, user, entry_id):
    """Bring snoozed notifications back now (one id, or a list of 1-500); they stay as
    read or unread as they were."""
    ids = _one_or_many(entry_id, "unsnooze")
    change = {"unsnoozed": ids}
    with client.pipeline(transaction=True) as pipe:
        pipe.zrem(_snoozed(user), *[pad(i) for i in ids])
        _announce(pipe, _snoozed(user), user, change)
        pipe.execute()
    schedule.remove(client, user, ids)  # last: until then, the waker finds nothing behind them
    return change


def _one_or_many(value, field):
    """A list of checked ids from one id or a list of them (a bulk action's)."""
    if isinstance(value, list):
        return check_ids(value, field)
    try:
        check_stream_id(value, field)
    except EnvelopeError as exc:
        raise StateError.of(exc) from None
    return [value]


def wake_due(client, now_ms=None, most=100):
    """Bring back the snoozes that are due, as unread; returns ``[(user, id)]`` woken.

    Every web process runs this. Each due member of the schedule is claimed
    first (its time moves CLAIM_MS ahead, atomically, only when due), so only
    one process wakes it. The user's own set then says whether it is due: no
    longer there (unsnoozed, deleted, or a snooze that never got past its
    first step), it leaves the schedule; there for later, the schedule moves
    to that time. Due, it is marked unread, then leaves the user's set with
    its announcement (unless snoozed again meanwhile), and only then leaves
    the schedule. A process that dies in between leaves the claim to lapse,
    and the snooze is woken, unread, by whichever process looks after that:
    at least once, never lost.
    """
    now_ms = now_ms or int(time.time() * 1000)
    claim_until = now_ms + CLAIM_MS
    woken = []
    for member in schedule.due(client, now_ms, most):
        if not schedule.claim(client, member, now_ms, claim_until):
            continue  # another process took it
        user, entry_id = schedule.parse(member)
        until = client.zscore(_snoozed(user), pad(entry_id))
        if until is None or until > now_ms:
            schedule.release(client, member, claim_until, then=until)
            continue
        read_state.apply(client, user, [], None, [entry_id])  # it comes back unread
        client.eval(_TAKE_BACK, 1, _snoozed(user), pad(entry_id), int(until), CONTROL,
                    control.state(user, {"unsnoozed": [entry_id], "woke": [entry_id]}))
        schedule.release(client, member, claim_until)
        woken.append((user, entry_id))
    return woken


def keep_waking(client, running, sleep=time.sleep):
    """Wake due snoozes every WAKE_EVERY seconds while ``running()`` (a web process's greenlet)."""
    while running():
        try:
            wake_due(client)
        except UNAVAILABLE:
            pass  # Redis away: the relay says so; the snoozes wait in Redis
        except Exception:  # a bug must not end the waker
            log.exception("waking snoozed notifications failed; trying again")
        sleep(WAKE_EVERY)
