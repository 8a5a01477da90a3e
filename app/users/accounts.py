"""Users and API keys, kept in Redis.

A user is the hash ``herald:{accounts}:user:<name>`` (werkzeug password hash,
admin flag, creation time, token key) plus membership of the set
``herald:{accounts}:users``. The token key is a random value that every token
of the user carries (see app/web/auth/tokens.py): replacing it (``users
revoke-tokens``) voids all the user's tokens at once. An API key is shown once
when created; only its SHA-256 is stored, in ``herald:{accounts}:apikey:<sha256>``
-> name and ``herald:{accounts}:apikeys`` name -> sha256, and its creation time
in ``herald:{accounts}:apikeys:created``. Revoking a key deletes all three.

Every key here shares the hash tag ``{accounts}`` (app/key_layout.py): on a
Redis Cluster they are in one slot, so that a user's hash and the set of users
(an API key's three keys) change in one transaction. Accounts are control data,
rarely written, so one slot is plenty.

The born floor (app.stream.keys.BORN, one key per name, read with the history)
is not in that slot, so it is written in a step of its own, always *before*
the account changes: when the account is created (only once the name was seen
free) and when it is removed. A floor is only ever too high, never too low: a
process that dies between the two steps leaves it raised for a name whose
account did not change, which hides that name's private notifications
published before then (the same as an account made and removed at once), and
never shows one to someone it was not meant for. Repeating the creation or the
removal completes it. (Two creations of one name at the same moment may raise
the winner's floor by the few milliseconds between them.)
"""
import hashlib
import re
import secrets
import time

import redis
from werkzeug.security import check_password_hash, generate_password_hash

from app.stream import control, history
from app.stream.keys import BORN
from app.stream.shards import configured as configured_shards
from app.users.announce import announce

TAG = "{accounts}"  # the hash tag of every key here: one slot on a cluster
USERS = f"herald:{TAG}:users"
USER = f"herald:{TAG}:user:"  # + a user's name: their hash
API_KEYS = f"herald:{TAG}:apikeys"
API_KEYS_CREATED = f"herald:{TAG}:apikeys:created"
API_KEY_RECORD = f"herald:{TAG}:apikey:"  # + an API key's SHA-256 -> its name
MIN_PASSWORD = 8
# Herald's own account (and API key) names: stricter than the user ids that address
# private notifications (app.stream.envelope.check_user_id: any text), which a host
# app's token may carry. Every account name is a user id; not every user id can be
# an account name (it never reaches these keys).
USERNAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")
USERNAME_RULE = "must be 1-64 characters of letters, digits, '_', '.' or '-'"
API_KEY_PREFIX = "hk_"


class AccountError(ValueError):
    """A user or key could not be created; the message says why."""


def user_key(name):
    """The hash of user ``name``."""
    return USER + name


def check_name(name, what="name"):
    """Raise AccountError unless ``name`` is a valid user or key name."""
    if not isinstance(name, str) or not USERNAME_RE.match(name):
        raise AccountError(f"{what}: {USERNAME_RULE}")


def create_user(client, name, password, admin=False):
    """Create a user; refuses a taken name or a password under 8 characters."""
    check_name(name)
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise AccountError(f"password: must be at least {MIN_PASSWORD} characters")
    fields = {
        "password": generate_password_hash(password),
        "admin": "1" if admin else "0",
        "created": str(int(time.time())),
        "token_key": secrets.token_hex(8),
    }
    taken = f"name: user {name!r} already exists"
    if client.exists(user_key(name)):
        raise AccountError(taken)
    # The born floor, first (see above): private notifications to this name from
    # before now were someone else's (app.stream.history.floor_of).
    client.set(BORN + name, history.last_generated(client, configured_shards().of_user(name)))
    _create_once(client, user_key(name), taken,
                 lambda pipe: (pipe.hset(user_key(name), mapping=fields), pipe.sadd(USERS, name)))


def _create_once(client, guard_key, taken_message, write, field=None):
    """Run ``write`` on a MULTI pipeline unless ``guard_key`` (or its ``field``) exists.

    WATCH makes the check and the write one step: all of it is written or,
    when the name is taken (even by a concurrent call), none of it.
    """
    with client.pipeline(transaction=True) as pipe:
        try:
            pipe.watch(guard_key)
            exists = pipe.hexists(guard_key, field) if field else pipe.exists(guard_key)
            if exists:
                raise AccountError(taken_message)
            pipe.multi()
            write(pipe)
            pipe.execute()
        except redis.WatchError:
            raise AccountError(taken_message) from None


def get_user(client, name):
    """``{"name", "admin", "token_key"}`` for an existing user, else None."""
    if not isinstance(name, str) or not USERNAME_RE.match(name):
        return None
    admin, token_key = client.hmget(user_key(name), "admin", "token_key")
    if admin is None:
        return None
    return {"name": name, "admin": admin == b"1",
            "token_key": token_key.decode() if token_key else ""}


def revoke_tokens(client, name):
    """Give user ``name`` a new token key: every token and session issued so far stops
    working, and every web process closes the user's open connections."""
    if get_user(client, name) is None:
        raise AccountError(f"name: there is no user {name!r}")
    with client.pipeline(transaction=True) as pipe:
        pipe.hset(user_key(name), "token_key", secrets.token_hex(8))
        announce(pipe, user_key(name), control.revoked(name))
        pipe.execute()


def remove_account(client, name):
    """Remove the account ``name`` (app.users.purge.delete_user removes the rest of
    what the user had): its tokens, sessions and open connections, Socket.IO and
    event streams, end in every web process (its token key is gone with it), and
    the born floor moves to now, so that no later holder of the name, nor a host
    app's token with this ``sub``, reads what was private to this account (the
    floor first, then the account: see above)."""
    if get_user(client, name) is None:
        raise AccountError(f"name: there is no user {name!r}")
    client.set(BORN + name, history.last_generated(client, configured_shards().of_user(name)))
    with client.pipeline(transaction=True) as pipe:
        pipe.delete(user_key(name))
        pipe.srem(USERS, name)
        announce(pipe, USERS, control.revoked(name))
        pipe.execute()


_UNKNOWN = []  # a password hash for names that do not exist, made on first use


def authenticate(client, name, password):
    """The user when ``password`` is right, else None.

    An unknown name costs the same password check as a known one (against a
    hash of nothing), so the answer's timing does not tell which names exist.
    """
    if not isinstance(password, str):
        password = ""
    known = isinstance(name, str) and USERNAME_RE.match(name)
    stored = client.hget(user_key(name), "password") if known else None
    if stored is None:
        if not _UNKNOWN:
            _UNKNOWN.append(generate_password_hash(secrets.token_hex(16)))
        check_password_hash(_UNKNOWN[0], password)
        return None
    if not check_password_hash(stored.decode(), password):
        return None
    return get_user(client, name)


def count_users(client):
    return client.scard(USERS)


def list_users(client):
    """``[{"name", "admin", "created"}]`` of every user, by name (``created``: Unix time)."""
    names = sorted(n.decode() for n in client.smembers(USERS))
    with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.hmget(user_key(name), "admin", "created")
        rows = pipe.execute()
    return [{"name": name, "admin": admin == b"1", "created": int(created) if created else None}
            for name, (admin, created) in zip(names, rows, strict=True) if admin is not None]


def set_password(client, name, password):
    """Give user ``name`` a new password; their tokens issued so far stop working
    (a new token key), as a changed password should mean."""
    if get_user(client, name) is None:
        raise AccountError(f"name: there is no user {name!r}")
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise AccountError(f"password: must be at least {MIN_PASSWORD} characters")
    client.hset(user_key(name), mapping={"password": generate_password_hash(password),
                                          "token_key": secrets.token_hex(8)})


def _digest(key):
    return hashlib.sha256(key.encode()).hexdigest()


def create_api_key(client, name):
    """Create a publisher key named ``name`` and return it; it is not kept in clear."""
    check_name(name)
    key = API_KEY_PREFIX + secrets.token_urlsafe(32)
    digest = _digest(key)
    _create_once(client, API_KEYS, f"name: API key {name!r} already exists",
                 lambda pipe: (pipe.hset(API_KEYS, name, digest),
                               pipe.hset(API_KEYS_CREATED, name, str(int(time.time()))),
                               pipe.set(api_key_record(digest), name)),
                 field=name)
    return key


def list_api_keys(client):
    """``[{"name", "created"}]`` of every API key, by name (``created``: Unix time or None)."""
    names = sorted(n.decode() for n in client.hkeys(API_KEYS))
    created = client.hmget(API_KEYS_CREATED, names) if names else []
    return [{"name": name, "created": int(when) if when else None}
            for name, when in zip(names, created, strict=True)]


def revoke_api_key(client, name):
    """Delete API key ``name``: requests carrying it are refused from now on."""
    with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(API_KEYS)
                digest = pipe.hget(API_KEYS, name)
                if digest is None:
                    raise AccountError(f"name: there is no API key {name!r}")
                pipe.multi()
                pipe.hdel(API_KEYS, name)
                pipe.hdel(API_KEYS_CREATED, name)
                pipe.delete(api_key_record(digest.decode()))
                pipe.execute()
                return
            except redis.WatchError:
                continue


def api_key_name(client, key):
    """The name of the API key ``key``, or None when it is unknown."""
    if not isinstance(key, str) or not key.startswith(API_KEY_PREFIX):
        return None
    return api_key_holder(client, api_key_record(_digest(key)))


def api_key_digest(key):
    """The SHA-256 (hex) under which API key ``key`` is stored."""
    return _digest(key)


def api_key_record(digest):
    """The Redis key that holds the name of the API key with SHA-256 ``digest``."""
    return f"{API_KEY_RECORD}{digest}"


def api_key_digest_of(record):
    """The digest in :func:`api_key_record`'s key."""
    return record[len(API_KEY_RECORD):]


def api_key_holder(client, record):
    """The name stored under ``record`` (an :func:`api_key_record`), or None."""
    name = client.get(record)
    return name.decode() if name else None
