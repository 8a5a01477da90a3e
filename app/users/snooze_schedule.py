"""The shared snooze schedule, ``herald:snoozes``: every user's snoozes in one sorted
set, scored by the time (ms) each comes back, which every web process's waker
watches (app.users.archive_and_snooze.wake_due). A member is ``user<TAB>id`` (a
user id may hold tabs, an id never does: read from the last tab).

The schedule is an index of the users' own snoozed sets
(``herald:{u:<user>}:snoozed``), which are the truth. On a Redis Cluster it is in
a hash slot of its own (one key, so its scripts run anywhere), apart from every
user's, so it is never written in one step with them. It is written so that it
never misses a snooze: a snooze is added here *before* the user's set, and
leaves here *after* it. A process that dies between the two steps leaves a
member with no snooze behind it, or with an earlier time than the user's; the
waker, when it comes due, looks at the user's set and drops it, or moves it to
the user's time (:func:`release`). A member of a deleted user is dropped the same way.
"""
KEY = "herald:snoozes"

# Claim ``member`` (ARGV[3]) when it is due (score <= ARGV[1]): move its score to
# ARGV[2] (the claim's end), so that no other waker takes it meanwhile and, should
# this one die before it is done, it is due again then. 1 when claimed.
_CLAIM = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[3])
if score and tonumber(score) <= tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  return 1
end
return 0
"""
# Done with ``member`` (ARGV[2]): only while it still holds this claim's score
# (ARGV[1]; snoozed again meanwhile, it keeps its new time), remove it, or with a
# time (ARGV[3]) move it there.
_RELEASE = """
if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[2])) == tonumber(ARGV[1]) then
  if ARGV[3] == '' then
    return redis.call('ZREM', KEYS[1], ARGV[2])
  end
  return redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
end
return 0
"""


def member(user, entry_id):
    """``user``'s snooze of ``entry_id`` in the schedule: ``user<TAB>id``."""
    return f"{user}\t{entry_id}"


def parse(raw):
    """``(user, id)`` of a member. A user id may hold tabs (it is any text), an
    entry id never does: the id is what follows the *last* tab."""
    user, _, entry_id = raw.decode().rpartition("\t")
    return user, entry_id


def add(client, user, ids, until_ms):
    client.zadd(KEY, {member(user, i): until_ms for i in ids})


def remove(client, user, ids):
    client.zrem(KEY, *[member(user, i) for i in ids])


def forget(client, user):
    """Take every snooze of ``user`` out of the schedule."""
    mine = [m for m, _score in client.zscan_iter(KEY) if parse(m)[0] == user]
    if mine:
        client.zrem(KEY, *mine)


def due(client, now_ms, most):
    """Up to ``most`` members due at ``now_ms``, the earliest first."""
    return client.zrangebyscore(KEY, "-inf", now_ms, start=0, num=most)


def claim(client, raw, now_ms, claim_until):
    """Whether this waker now holds member ``raw`` (due) until ``claim_until``."""
    return bool(client.eval(_CLAIM, 1, KEY, now_ms, claim_until, raw))


def release(client, raw, claim_until, then=None):
    """Remove member ``raw`` (or with ``then``, move it to that time) unless it was
    snoozed again since it was claimed until ``claim_until``."""
    client.eval(_RELEASE, 1, KEY, claim_until, raw, "" if then is None else int(then))
