"""Users and API keys, kept in Redis.

A user is the hash ``herald:user:<name>`` (werkzeug password hash, admin
flag, creation time) plus membership of the set ``herald:users``. An API key
is shown once when created; only its SHA-256 is stored, in
``herald:apikey:<sha256>`` -> name and ``herald:apikeys`` name -> sha256.
"""
import hashlib
import secrets
import time

import redis
from werkzeug.security import check_password_hash, generate_password_hash

from .notifications import USERNAME_RE, USERNAME_RULE

USERS = "herald:users"
API_KEYS = "herald:apikeys"
MIN_PASSWORD = 8
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
    }
    _create_once(client, _user_key(name), f"name: user {name!r} already exists",
                 lambda pipe: (pipe.hset(_user_key(name), mapping=fields), pipe.sadd(USERS, name)))


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
    """``{"name", "admin"}`` for an existing user, else None."""
    if not isinstance(name, str) or not USERNAME_RE.match(name):
        return None
    admin = client.hget(_user_key(name), "admin")
    if admin is None:
        return None
    return {"name": name, "admin": admin == b"1"}


def authenticate(client, name, password):
    """The user when ``password`` is right, else None (same for unknown names)."""
    if not isinstance(name, str) or not USERNAME_RE.match(name) or not isinstance(password, str):
        return None
    stored = client.hget(_user_key(name), "password")
    if stored is None or not check_password_hash(stored.decode(), password):
        return None
    return get_user(client, name)


def count_users(client):
    return client.scard(USERS)


def _digest(key):
    return hashlib.sha256(key.encode()).hexdigest()


def create_api_key(client, name):
    """Create a publisher key named ``name`` and return it; it is not kept in clear."""
    check_name(name)
    key = API_KEY_PREFIX + secrets.token_urlsafe(32)
    digest = _digest(key)
    _create_once(client, API_KEYS, f"name: API key {name!r} already exists",
                 lambda pipe: (pipe.hset(API_KEYS, name, digest),
                               pipe.set(f"herald:apikey:{digest}", name)),
                 field=name)
    return key


def api_key_name(client, key):
    """The name of the API key ``key``, or None when it is unknown."""
    if not isinstance(key, str) or not key.startswith(API_KEY_PREFIX):
        return None
    name = client.get(f"herald:apikey:{_digest(key)}")
    return name.decode() if name else None
