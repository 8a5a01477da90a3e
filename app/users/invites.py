"""One-time invite links: an admin invites a user by name, the invitee sets the password.

:func:`create` makes a random token (in the link, shown once to the admin)
and keeps only its SHA-256, under the accounts' hash tag, with the name, the
admin flag, who invited and when, for ``INVITE_TTL`` seconds (Redis expires
it). :func:`accept` takes the invite and makes the account in one step that
only one caller can win (``GETDEL`` of the record): a link works once, and
not after it expires. Nothing of the token is stored in the clear, so a copy
of Redis cannot be used to take an invite, nor can the link be shown again.

The SHA-256 is also the invite's public id: a sorted set indexes the pending
ones by expiry, so the Users page lists them (:func:`listing`) and an admin can
withdraw one (:func:`withdraw`), after which its link is as dead as a spent one.

    token = invites.create(redis, "carol", admin=False, by="admin")
    invites.pending(redis, token)   # {"name": "carol", "admin": False, ...} or None
    invites.listing(redis)          # [{"id": digest(token), "name": "carol", ...}]
    invites.withdraw(redis, digest(token))   # the invite, or None; the link is dead
    invites.accept(redis, token, "a good password")   # the new user; the link is spent
"""
import hashlib
import json
import re
import secrets
import time

from app.users import accounts

INVITE_TTL = 3 * 24 * 3600  # seconds an invite link works: three days
INVITE = f"herald:{accounts.TAG}:invite:"  # + the token's SHA-256 -> the invite (JSON)
INVITES = f"herald:{accounts.TAG}:invites"  # sorted set: the SHA-256 of each pending one -> expiry
ID_RE = re.compile(r"[0-9a-f]{64}\Z")


class InviteError(ValueError):
    """An invite that cannot be made or used; the message says why."""


def digest(token):
    """The SHA-256 of ``token``: what is stored, and the invite's id."""
    return hashlib.sha256(token.encode()).hexdigest()


def key(token):
    return INVITE + digest(token)


def create(client, name, admin=False, by=None, ttl=INVITE_TTL):
    """A new invite for user ``name`` (not yet taken); its token, for the link."""
    accounts.check_name(name)
    if accounts.get_user(client, name) is not None:
        raise accounts.AccountError(f"name: {name!r} is taken")
    token = secrets.token_urlsafe(24)
    now = time.time()
    record = {"name": name, "admin": bool(admin), "by": by, "created": int(now),
              "expires": int(now + ttl)}
    with client.pipeline(transaction=True) as pipe:
        pipe.set(key(token), json.dumps(record), ex=ttl)
        pipe.zadd(INVITES, {digest(token): record["expires"]})
        pipe.zremrangebyscore(INVITES, "-inf", f"({int(now)}")  # expired ones
        pipe.execute()
    return token


def pending(client, token):
    """The invite of ``token`` while it can be used (``name``, ``admin``, ``by``,
    ``created``, ``expires``), else None (unknown, used, or expired)."""
    if not isinstance(token, str) or not token:
        return None
    raw = client.get(key(token))
    return json.loads(raw) if raw else None


def listing(client):
    """Every invite that can still be used, the soonest to expire first: its ``id``
    (for :func:`withdraw`), ``name``, ``admin``, ``by``, ``created`` and ``expires``."""
    client.zremrangebyscore(INVITES, "-inf", f"({int(time.time())}")
    ids = [i.decode() if isinstance(i, bytes) else i for i in client.zrange(INVITES, 0, -1)]
    if not ids:
        return []
    records = client.mget([INVITE + i for i in ids])
    gone = [i for i, raw in zip(ids, records, strict=True) if raw is None]
    if gone:  # expired a moment early (Redis's TTL, not the score) or left by a crash
        client.zrem(INVITES, *gone)
    return [dict(json.loads(raw), id=i) for i, raw in zip(ids, records, strict=True) if raw]


def withdraw(client, invite_id):
    """Delete the invite ``invite_id`` (see :func:`digest`) so that its link no longer
    works; the invite that was withdrawn, or None when there was none to withdraw."""
    if not isinstance(invite_id, str) or not ID_RE.match(invite_id):
        return None
    with client.pipeline(transaction=True) as pipe:
        pipe.getdel(INVITE + invite_id)
        pipe.zrem(INVITES, invite_id)
        raw, _ = pipe.execute()
    return json.loads(raw) if raw else None


def accept(client, token, password):
    """Spend the invite and make its account with ``password``; the new user.

    The password is checked first, so a short one leaves the link usable.
    Raises :class:`InviteError` when the link is unknown, used or expired, and
    ``accounts.AccountError`` when the name was taken meanwhile (the link is spent).
    """
    if not isinstance(password, str) or len(password) < accounts.MIN_PASSWORD:
        raise accounts.AccountError(f"password: must be at least {accounts.MIN_PASSWORD} characters")
    raw = None
    if isinstance(token, str) and token:
        with client.pipeline(transaction=True) as pipe:
            pipe.getdel(key(token))
            pipe.zrem(INVITES, digest(token))
            raw, _ = pipe.execute()
    if not raw:
        raise InviteError("this invite link was used already or has expired")
    invite = json.loads(raw)
    accounts.create_user(client, invite["name"], password, admin=invite["admin"])
    return accounts.get_user(client, invite["name"])
