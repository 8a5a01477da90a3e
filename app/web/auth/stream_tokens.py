"""Stream tokens: short-lived, single-purpose credentials for ``GET /api/stream``.

A browser's ``EventSource`` cannot send an ``Authorization`` header, so it
carries a token in the query string. A long-lived credential must never sit
in a URL (URLs end up in logs and histories), so ``POST /api/stream-token``
turns the caller's own credential into one of these: it names the user, the
topic prefixes they are limited to (a host-app token's ``topics`` claim) and,
for a Herald account, its token key (so signing out or revoking ends it too);
it expires after STREAM_TOKEN_TTL seconds, or when the credential it was made
from does (a host-app token's ``exp``), whichever comes first; a stream opened
with it ends then too. It is signed under a salt of its own, so it opens a
stream and nothing else, while no other token opens a stream from the query
string.
"""
import time

from itsdangerous import BadData, SignatureExpired, URLSafeTimedSerializer

from app.users import accounts
from app.web.auth.bearer import Identity
from app.web.auth.tokens import TokenError, check_user, refusal

SALT = "herald.stream-token.v1"


def _serializer(secret):
    return URLSafeTimedSerializer(secret, salt=SALT)


def issue(secret, who, token_key=None):
    """A stream token for the :class:`~.bearer.Identity` ``who`` (``token_key``:
    their account's, for a Herald user; None for a host app's user). It carries
    ``who.expires``: it is refused after that, and a stream it opened ends then."""
    return _serializer(secret).dumps({"u": who.name, "k": token_key, "t": who.topics,
                                      "e": who.expires})


def lifetime(who, ttl):
    """Seconds a stream token made now for ``who`` is good for: ``ttl``, or less
    when ``who``'s own credential expires sooner."""
    if who.expires is None:
        return ttl
    return max(0, min(ttl, int(who.expires - time.time())))


def verify(client, secret, token, max_age):
    """The Identity a stream token stands for; raises TokenError saying why not."""
    if not token:
        raise TokenError("token is missing")
    try:
        payload = _serializer(secret).loads(token, max_age=max_age)
    except SignatureExpired as exc:
        raise refusal("stream token has expired; ask POST /api/stream-token for "
                      "another", exc) from None
    except BadData as exc:
        raise refusal("stream token is invalid (only POST /api/stream-token makes "
                      "them)", exc) from None
    name, key, topics = payload.get("u"), payload.get("k"), payload.get("t")
    expires = payload.get("e")
    if expires is not None and expires <= time.time():
        raise TokenError("stream token has expired with the token it was made from; "
                         "ask POST /api/stream-token for another with a fresh one")
    if key is None:  # a host app's user: the host app vouched for them
        return Identity(name, False, "jwt", topics, expires)
    user = accounts.get_user(client, name)
    check_user(user, key)
    return Identity(user["name"], user["admin"], "token", topics, expires)
