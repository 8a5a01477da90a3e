"""What a publish is checked against (a credential, a quota) and how it can be
refused: the types app/stream/publish.py's Bus takes and raises, apart from it so
that the web layer can name them without the Bus's machinery. (app.stream.publish
re-exports them: that is where callers have always found them.)"""
from typing import NamedTuple


class BusUnavailable(RuntimeError):
    """Redis could not be reached, so the publish was not confirmed.

    Usually nothing was written; but when Redis went away after writing and
    before answering, the notification is stored. Publishing again under the
    same idempotency key is safe either way: it is stored once.
    """


class IdempotencyConflict(ValueError):
    """An idempotency key already used for a different notification."""


class CredentialRefused(PermissionError):
    """The credential the publish was checked against no longer names its holder
    (an API key revoked since it was last looked up): nothing was written."""


class Credential(NamedTuple):
    """A credential the publish script checks in its atomic step: the Redis key
    that must still hold ``holder`` (app/web/auth/api_keys.py)."""

    key: str
    holder: str


class Quota(NamedTuple):
    """Rate limits the publish script counts in its atomic step, one request against
    each: fixed windows, ``amounts[i]`` requests per ``windows[i]`` seconds, counted
    under ``keys[i]`` (app/web/publish_quota.py)."""

    keys: tuple
    amounts: tuple
    windows: tuple

    def arguments(self):
        """The limits' (amount, window) pairs, flat, as the scripts take them."""
        return [value for pair in zip(self.amounts, self.windows, strict=True) for value in pair]


class QuotaExceeded(RuntimeError):
    """A rate limit of the publish's :class:`Quota` was past its amount: nothing was
    written. ``index`` is that limit's position in the quota."""

    def __init__(self, index):
        super().__init__(f"rate limit {index} exceeded")
        self.index = index
