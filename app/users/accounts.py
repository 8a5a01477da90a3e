"""Users and API keys, kept in Redis.

A user is the hash ``herald:user:<name>`` (werkzeug password hash, admin
flag, creation time, token key) plus membership of the set ``herald:users``.
The token key is a random value that every token of the user carries (see
app/web/auth/tokens.py): replacing it (``users revoke-tokens``) voids all the
user's tokens at once. An API key is shown once when created; only its
SHA-256 is stored, in ``herald:apikey:<sha256>`` -> name and
``herald:apikeys`` name -> sha256, and its creation time in
``herald:apikeys:created``. Revoking a key deletes all three.
"""
import hashlib
import re
import secrets
import time

import redis
from werkzeug.security import check_password_hash, generate_password_hash

from app.stream import control, history
from app.stream.keys import BORN, CONTROL

USERS = "herald:users"
API_KEYS = "herald:apikeys"
API_KEYS_CREATED = "herald:apikeys:created"
API_KEY_RECORD = "herald:apikey:"  # + an API key's SHA-256 -> its name
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


def _user_key(name):
    return f"herald:user:{name}"


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
    # The born floor: private notifications to this name from before now were
    # someone else's (app.stream.history.floor_of).
    born = history.last_generated(client)
    _create_once(client, _user_key(name), f"name: user {name!r} already exists",
                 lambda pipe: (pipe.hset(_user_key(name), mapping=fields), pipe.sadd(USERS, name),
                               pipe.set(BORN + name, born)))


def _create_once(client, guard_key, taken_message, write, field=None):
    """Run ``write`` on a MULTI pipeline unless ``guard_key`` (or its ``field``) exists.

    WATCH makes the check and the write one step: all of it is written or,
    when the name is taken (even by a concurrent call), none of it.
    """
    with client.pipeline() as pipe:
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
    admin, token_key = client.hmget(_user_key(name), "admin", "token_key")
    if admin is None:
        return None
    return {"name": name, "admin": admin == b"1",
            "token_key": token_key.decode() if token_key else ""}


def revoke_tokens(client, name):
    """Give user ``name`` a new token key: every token and session issued so far stops
    working, and every web process closes the user's open connections."""
    if get_user(client, name) is None:
        raise AccountError(f"name: there is no user {name!r}")
    with client.pipeline() as pipe:
        pipe.hset(_user_key(name), "token_key", secrets.token_hex(8))
        pipe.publish(CONTROL, control.revoked(name))
        pipe.execute()


def remove_account(client, name):
    """Remove the account ``name`` (app.users.purge.delete_user removes the rest of
    what the user had): its tokens, sessions and open connections, Socket.IO and
    event streams, end in every web process (its token key is gone with it), and
    the born floor moves to now, so that no later holder of the name, nor a host
    app's token with this ``sub``, reads what was private to this account."""
    if get_user(client, name) is None:
        raise AccountError(f"name: there is no user {name!r}")
    with client.pipeline() as pipe:
        pipe.delete(_user_key(name))
        pipe.srem(USERS, name)
        pipe.set(BORN + name, history.last_generated(client))
        pipe.publish(CONTROL, control.revoked(name))
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
    stored = client.hget(_user_key(name), "password") if known else None
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
            pipe.hmget(_user_key(name), "admin", "created")
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
    client.hset(_user_key(name), mapping={"password": generate_password_hash(password),
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
    with client.pipeline() as pipe:
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
