"""Publishing: the one way a notification enters Herald.

:func:`publish` validates an envelope, stamps ``ts``, and in one Lua script
(atomic, so nothing is ever half-written) appends it to the ``herald:stream``
history, whose entry id becomes the notification id, and publishes the live
copy, id included, on ``herald:live``. A reader therefore never sees a live id
that the stream lacks.

It works from any process that can reach Redis (``REDIS_URL``)::

    from app.stream.publish import publish
    publish("spark.job.succeeded", "Rollup done", severity="success")

Stream entries hold three fields: ``topic``, ``user`` (empty when public) and
``envelope`` (the JSON without ``id``; the entry id is the id), so readers can
filter by topic and owner without decoding JSON.
"""
import hashlib
from typing import NamedTuple

import orjson

from app.redis_client import UNAVAILABLE, connect
from app.settings import history_max, redis_url
from app.stream import envelope as rules
from app.stream.keys import EPOCH, LIVE, STREAM

DEFAULT_HISTORY_MAX = 100_000

# The stream's epoch (keys.EPOCH): the id of the first entry of the stream's life, set by the
# publish that creates the stream (after it was deleted, replaced, or lost with
# Redis's data). A client's last_id from before it comes from another stream:
# not recoverable by replay (state.missed_history).
_NEW_EPOCH_LUA = """
local function add(stream, epoch, ...)
  local fresh = redis.call('EXISTS', stream) == 0
  local id = redis.call('XADD', stream, ...)
  if fresh then redis.call('SET', epoch, id) end
  return id
end
"""

# KEYS: stream, live channel, epoch, idempotency key ("": none)[, credential key].
# ARGV: maxlen, key ttl, "fingerprint", the credential's holder ("": none), then
# one (envelope JSON without id, topic, user, ts) quadruple per notification.
# With a credential key that no longer names its holder (an API key revoked
# since this process last looked it up) it writes nothing and answers {-1, ""}.
# Else it writes them all, in order, and answers {1, "id ts id ts ..."}. With an
# idempotency key already seen it writes nothing and answers {0, what the first
# publish stored: "fingerprint id ts id ts ..."}; a new key remembers this
# publish, in the same atomic step.
_PUBLISH_LUA = _NEW_EPOCH_LUA + """
if KEYS[5] and redis.call('GET', KEYS[5]) ~= ARGV[4] then return {-1, ''} end
if KEYS[4] ~= '' then
  local seen = redis.call('GET', KEYS[4])
  if seen then return {0, seen} end
end
local written = {}
for i = 5, #ARGV, 4 do
  local id = add(KEYS[1], KEYS[3], 'MAXLEN', '~', ARGV[1], '*',
                 'topic', ARGV[i + 1], 'user', ARGV[i + 2], 'envelope', ARGV[i])
  redis.call('PUBLISH', KEYS[2], '{"id":"' .. id .. '",' .. string.sub(ARGV[i], 2))
  written[#written + 1] = id .. ' ' .. ARGV[i + 3]
end
local answer = table.concat(written, ' ')
if KEYS[4] ~= '' then redis.call('SET', KEYS[4], ARGV[3] .. ' ' .. answer, 'EX', ARGV[2]) end
return {1, answer}
"""
IDEMPOTENCY_TTL = 24 * 3600


# KEYS: stream, live channel, batch key, epoch. ARGV: maxlen, batch-key ttl, then
# one triple (envelope JSON without id, topic, user) per notification. The ids
# are kept under the batch key, in the same atomic step, so that a caller who
# lost the reply can learn whether the batch was written, and its ids.
_PUBLISH_BATCH_LUA = _NEW_EPOCH_LUA + """
local ids = {}
for i = 3, #ARGV, 3 do
  local id = add(KEYS[1], KEYS[4], 'MAXLEN', '~', ARGV[1], '*',
                 'topic', ARGV[i + 1], 'user', ARGV[i + 2], 'envelope', ARGV[i])
  redis.call('PUBLISH', KEYS[2], '{"id":"' .. id .. '",' .. string.sub(ARGV[i], 2))
  ids[#ids + 1] = id
end
redis.call('SET', KEYS[3], table.concat(ids, ' '), 'EX', ARGV[2])
return ids
"""
BATCH_KEY_TTL = 3600
MAX_BATCH = 100  # notifications in one publish_envelopes call

class Prepared(NamedTuple):
    """A validated notification, encoded and stamped, ready to publish."""

    raw: bytes   # the envelope's JSON, without id
    topic: str
    user: str    # "" when public
    ts: str


def prepare(envelope):
    """Validate and encode ``envelope``, stamping ``ts``; raises EnvelopeError."""
    return _prepare_clean(rules.validate(envelope))


def _prepare_clean(clean):
    ts = rules.now_iso()
    return Prepared(rules.encode(clean, ts), clean["topic"], clean.get("user", ""), ts)


def fingerprint(clean):
    """A short digest of a validated envelope (key order aside), to tell a
    retry of a publish from another notification under the same key."""
    return hashlib.sha256(orjson.dumps(clean, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]


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


class Bus:
    """Publishes to one Redis; safe to share between threads and greenlets."""

    def __init__(self, client, history_max=DEFAULT_HISTORY_MAX):
        self.client = client
        self.history_max = history_max
        self._script = client.register_script(_PUBLISH_LUA)
        self._batch_script = client.register_script(_PUBLISH_BATCH_LUA)

    def publish_envelope(self, envelope, idempotency_key=None, credential=None):
        """Validate and publish ``envelope`` (a dict without id/ts).

        Returns ``{"id": ..., "ts": ...}``. Raises EnvelopeError naming the
        field for bad input, BusUnavailable when Redis cannot be reached.

        With ``idempotency_key`` (any string; whoever publishes scopes it) a
        publish is stored at most once for a day: a repeat answers the first
        one's id and ts, with ``"replayed": True``, and writes nothing. So a
        caller who got no answer (BusUnavailable, a timeout) can simply try
        again. The same key with a different envelope raises
        IdempotencyConflict.

        With ``credential`` (a :class:`Credential`) nothing is written unless
        it still names its holder, checked in the same atomic step: else
        CredentialRefused.
        """
        [published], replayed = self._publish([rules.validate(envelope)],
                                              idempotency_key, credential)
        return dict(published, replayed=True) if replayed else published

    def publish_envelopes(self, envelopes, idempotency_key=None, credential=None):
        """Validate and publish a list of envelopes, all or none, in order.

        Returns ``({"notifications": [{"id", "ts"}, ...]}, replayed)``. Every
        envelope is checked before anything is written: an EnvelopeError
        names the one at fault (``notifications[2].topic: ...``). The
        idempotency key covers the whole list, and ``credential`` is checked,
        as in :meth:`publish_envelope`.
        """
        if not isinstance(envelopes, list) or not 1 <= len(envelopes) <= MAX_BATCH:
            raise rules.EnvelopeError(
                "notifications", f"must be a list of 1-{MAX_BATCH} notifications")
        clean = []
        for index, envelope in enumerate(envelopes):
            try:
                clean.append(rules.validate(envelope))
            except rules.EnvelopeError as exc:
                raise rules.EnvelopeError(f"notifications[{index}].{exc.field}",
                                                  exc.rule) from None
        published, replayed = self._publish(clean, idempotency_key, credential)
        return {"notifications": published}, replayed

    def _publish(self, clean, idempotency_key, credential=None):
        """Publish validated envelopes in one script; returns (``[{"id", "ts"}]``, replayed)."""
        prepared = [_prepare_clean(item) for item in clean]
        once = "" if idempotency_key is None else \
            "herald:publish:once:" + hashlib.sha256(idempotency_key.encode()).hexdigest()
        keys = [STREAM, LIVE, EPOCH, once]
        digest = fingerprint(clean[0] if len(clean) == 1 else clean)
        args = [self.history_max, IDEMPOTENCY_TTL, digest, ""]
        if credential is not None:
            keys.append(credential.key)
            args[3] = credential.holder
        for item in prepared:
            args += [item.raw, item.topic, item.user, item.ts]
        try:
            written, value = self._script(keys=keys, args=args)
        except UNAVAILABLE as exc:
            raise BusUnavailable(f"Redis is unreachable: {exc}") from exc
        if written == -1:
            raise CredentialRefused("the credential was revoked")
        if written:
            return _pairs(_text(value).split(" ")), False
        first_digest, stored = _stored_answer(_text(value))
        if first_digest != digest or len(stored) != len(prepared):
            raise IdempotencyConflict("idempotency key: already used for a different notification")
        return stored, True

    def publish(self, topic, title, idempotency_key=None, **fields):
        """Publish a notification given as keywords; returns its id."""
        envelope = dict(fields, topic=topic, title=title)
        return self.publish_envelope(envelope, idempotency_key)["id"]

    def publish_batch(self, prepared, batch_key):
        """Publish many :class:`Prepared` notifications in one round trip, in order.

        All or none are written (one Lua script). Returns their ids. Raises
        a Redis connection error when Redis cannot be reached; whether the
        batch was written then is what :meth:`batch_outcome` tells.
        """
        args = [self.history_max, BATCH_KEY_TTL]
        for item in prepared:
            args += [item.raw, item.topic, item.user]
        ids = self._batch_script(keys=[STREAM, LIVE, batch_key, EPOCH], args=args)
        return [_text(i) for i in ids]

    def batch_outcome(self, batch_key):
        """The ids a batch written under ``batch_key`` got, or None if it was not written."""
        value = self.client.get(batch_key)
        return value.decode().split(" ") if value else None


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _pairs(words):
    """``[{"id", "ts"}]`` from ``["id", "ts", "id", "ts", ...]``."""
    return [{"id": words[i], "ts": words[i + 1]} for i in range(0, len(words), 2)]


def _stored_answer(value):
    """``(fingerprint, [{"id", "ts"}])`` of what an idempotency key keeps.

    Keys written before batches existed (kept a day) hold "id ts fingerprint".
    """
    words = value.split(" ")
    if "-" in words[0]:
        return words[2], [{"id": words[0], "ts": words[1]}]
    return words[0], _pairs(words[1:])


_default_bus = None


def default_bus():
    """A Bus on ``REDIS_URL`` (or the private Redis), made once per process."""
    global _default_bus
    if _default_bus is None:
        _default_bus = Bus(connect(redis_url()), history_max())
    return _default_bus


def publish(topic, title, *, bus=None, **fields):
    """Publish one notification and return its id.

    ``fields`` are the optional envelope fields: body, severity, data, user,
    origin, correlation_id; and ``idempotency_key``, to store it at most once
    (see :meth:`Bus.publish_envelope`). Raises EnvelopeError, BusUnavailable
    or IdempotencyConflict.
    """
    return (bus or default_bus()).publish(topic, title, **fields)
