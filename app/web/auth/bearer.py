"""Whose bearer token is this: one of Herald's own, or one the host app minted.

Both kinds are accepted wherever a user's token is (Socket.IO connect,
``GET /api/notifications``, read state):

- Herald's tokens (``POST /auth/token``, the dashboard) name a Herald
  account and carry its token key (see tokens.py), so revoking works;
- host-app tokens are JWTs (see host_tokens.py): the host app vouches for
  the user, who needs no Herald account, is never an admin, and may be
  limited to some topic prefixes by the token's ``topics`` claim.

A token shaped like a JWT is only ever checked as one, so a bad JWT is
refused with the JWT's reason, never retried as something else.
"""
from typing import NamedTuple

from app.users import accounts
from app.web.auth import host_tokens, tokens


class Identity(NamedTuple):
    """Who is calling.

    ``kind`` is "session", "token" (Herald's), "jwt" (the host app's) or
    "apikey"; ``topics`` the only prefixes the caller may subscribe to and
    read (None: no limit; only host-app tokens set it); ``expires`` when the
    credential stops being accepted (UNIX seconds; a JWT's ``exp``, a Herald
    token's issue time plus ``TOKEN_TTL``; None for sessions and API keys): a
    connection or event stream opened with it ends then. ``unverified``: an
    API key this process remembers valid, not looked up for this request (its
    Redis key): checked where it is used (app/web/auth/api_keys.py).
    """

    name: str
    admin: bool
    kind: str
    topics: list | None = None
    expires: float | None = None
    unverified: str | None = None


class TokenVerifier:
    """Checks a user's bearer token of either kind; raises tokens.TokenError saying why not."""

    def __init__(self, client, secret_key, token_ttl, host):
        self.client = client
        self.secret_key = secret_key
        self.token_ttl = token_ttl
        self.host = host  # a host_tokens.HostTokens

    def reading_through(self, client):
        """The same verifier, reading users through ``client`` (a connect's batched
        reads, app/realtime/batched_reads.py)."""
        return TokenVerifier(client, self.secret_key, self.token_ttl, self.host)

    def verify(self, token, along=None):
        """The :class:`Identity` behind ``token``.

        ``along(name)``, when given, is called once the token's signature names its
        user and before that user's record is read: a Socket.IO connect asks for the
        user's subscriptions there, so that both reads share one round trip
        (app/realtime/batched_reads.py). What it asked is only used if the token holds."""
        if not token or not isinstance(token, str):
            raise tokens.TokenError("token is missing")
        # (one of Herald's own that was checked before is no JWT: not looked at as one)
        if not tokens.signed_before(self.secret_key, token) and host_tokens.looks_like_jwt(token):
            user = self.host.verify(token)
            return Identity(user.name, False, "jwt", user.topics, user.expires)
        name, key, expires = tokens.verify_with_expiry(self.secret_key, token, self.token_ttl)
        if along is not None:
            along(name)
        user = accounts.get_user(self.client, name)
        tokens.check_user(user, key)
        return Identity(user["name"], user["admin"], "token", expires=expires)
