"""API keys, checked without a round trip of their own where they publish.

A REST publish made with an API key cost three Redis round trips in a row:
the rate limit, the key's lookup, the publish script; each is a wake-up of
Redis and of this process (bench/RESULTS.md, publish-to-browser). This
process remembers the keys it has seen valid (their SHA-256 -> name), and an
API key it knows is taken at its word for the moment: its Identity carries
the key's Redis key as ``unverified``. Nothing is trusted on that word alone:

- a publish hands it to the publish script, which writes nothing unless the
  key still names its holder, in the same atomic step (app/stream/publish.py,
  Credential): a key revoked in any process is refused by the next publish
  made with it, here as anywhere (on a Redis Cluster the key's record, in the
  accounts' hash slot, is read just before the script instead: one more round
  trip there);
- anything else an API key asks for is checked against Redis first
  (:func:`verified`, from app/web/api/access.py), as before.

A key found revoked is forgotten, and the request answered 401 as an
unknown key is. Only keys found valid are remembered (so a stream of made-up
keys cannot fill the memory), at most MAX_KNOWN of them.
"""
from app.stream.publish import Credential
from app.users import accounts

MAX_KNOWN = 4096  # API keys remembered per process; past it, the memory starts again


class KnownKeys:
    """The API keys this process has seen valid: digest -> name."""

    def __init__(self, limit=MAX_KNOWN):
        self.limit = limit
        self.names = {}

    def identify(self, client, key):
        """``(name, unverified)`` for API key ``key``: its name, and None when it was
        just looked up in Redis, or its Redis key when only remembered; ``(None,
        None)`` when Redis does not know it."""
        digest = accounts.api_key_digest(key)
        name = self.remembered(digest)
        if name is not None:
            return name, accounts.api_key_record(digest)
        name = accounts.api_key_name(client, key)
        if name is not None:
            if len(self.names) >= self.limit:
                self.names.clear()
            self.names[digest] = name
        return name, None

    def remembered(self, digest):
        """The name of the API key whose SHA-256 is ``digest``, if this process has seen it
        valid (not checked now: the publish script checks it), else None."""
        return self.names.get(digest)

    def forget(self, record):
        """The key stored under Redis key ``record`` was found revoked."""
        self.names.pop(accounts.api_key_digest_of(record), None)


def credential(who):
    """What the publish script must check for caller ``who`` (a Credential), or None
    when nothing needs checking (not a remembered API key)."""
    unverified = getattr(who, "unverified", None)
    return Credential(unverified, who.name) if unverified else None


def verified(client, known, who):
    """``who`` with its remembered API key checked against Redis now; None when the
    key was revoked (and is forgotten)."""
    if not getattr(who, "unverified", None):
        return who
    if accounts.api_key_holder(client, who.unverified) != who.name:
        known.forget(who.unverified)
        return None
    return who._replace(unverified=None)
