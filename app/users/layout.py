"""The keys of app/users that moved for a Redis Cluster (app/key_layout.py): (glob of
the old names, old name -> new name or None).

Before: ``herald:users``, ``herald:user:<name>``, ``herald:apikeys``,
``herald:apikeys:created``, ``herald:apikey:<sha256>`` (accounts), and per user
``herald:<kind>:<user>`` (subs, read, readids, unreadids, archived, snoozed,
prefs). After: the accounts' under the tag ``{accounts}``, each user's under
``{u:<user>}`` (``herald:{u:<user>}:<kind>``). The shared snooze schedule
``herald:snoozes`` keeps its name (one key: its own slot), as do its members.

Each glob matches only old names of this package: every old prefix ends with
``:`` (so ``herald:read:*`` is not ``herald:readids:…``) and no new name
begins ``herald:`` + a letter, so a key already moved is never matched again.
"""
from app.users import accounts, archive_and_snooze, preferences, read_state, subscriptions


def _same(new):
    """An old key that has exactly one new name."""
    return lambda old: new


def _moved(old_prefix, new_name):
    """``<old_prefix><rest>`` -> ``new_name(rest)`` (rest: a user's name, a digest)."""
    return lambda old: new_name(old[len(old_prefix):])


def _per_user(kind, new_name):
    """The glob and rename of the per-user keys ``herald:<kind>:<user>``."""
    prefix = f"herald:{kind}:"
    return prefix + "*", _moved(prefix, new_name)


RENAMES = [
    ("herald:users", _same(accounts.USERS)),
    ("herald:user:*", _moved("herald:user:", accounts.user_key)),
    ("herald:apikeys", _same(accounts.API_KEYS)),
    ("herald:apikeys:created", _same(accounts.API_KEYS_CREATED)),
    ("herald:apikey:*", _moved("herald:apikey:", accounts.api_key_record)),
    _per_user("subs", subscriptions.key),
    _per_user("read", lambda user: read_state.keys_of(user)[0]),
    _per_user("readids", lambda user: read_state.keys_of(user)[1]),
    _per_user("unreadids", lambda user: read_state.keys_of(user)[2]),
    _per_user("archived", lambda user: archive_and_snooze.keys_of(user)[0]),
    _per_user("snoozed", lambda user: archive_and_snooze.keys_of(user)[1]),
    _per_user("prefs", preferences.key),
]
