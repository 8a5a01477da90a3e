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

from app import key_layout
from app.redis_client import UNAVAILABLE, is_cluster
from app.settings import get, history_max, redis_url
from app.stream import envelope as rules
from app.stream import publish_scripts as scripts
from app.stream import replicated
from app.stream.publish_checks import (  # noqa: F401  (re-exported: callers import them from here)
    BusUnavailable,
    Credential,
    CredentialRefused,
    IdempotencyConflict,
    Quota,
    QuotaExceeded,
)
from app.stream.replicated import Durability, NotReplicated
from app.stream.shards import configured as configured_shards

DEFAULT_HISTORY_MAX = 100_000

AT_ONCE = Durability()  # answered as soon as the master has it (PUBLISH_REPLICAS=0)
IDEMPOTENCY_TTL = 24 * 3600
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


class Bus:
    """Publishes to one Redis, or a Redis Cluster; safe to share between threads and
    greenlets.

    On a cluster the credential is not in the stream's hash slot (it is the API
    key's record), so the script cannot read it: it is checked by a read just
    before the script instead. An API key revoked between that read and the
    script's write lets that one publish through, as one revoked while its
    request was on the wire would; the next one is refused."""

    def __init__(self, client, history_max=DEFAULT_HISTORY_MAX, durability=AT_ONCE, shards=None):
        self.client = client
        self.shards = shards or configured_shards()  # STREAM_SHARDS (app/stream/shards.py)
        self.cluster = is_cluster(client)
        self.history_max = history_max
        self.durability = durability  # replicas a publish must be on before it is answered
        self._script = client.register_script(scripts.PUBLISH)
        self._batch_script = client.register_script(scripts.PUBLISH_BATCH)
        self._spend_script = client.register_script(scripts.SPEND)

    def publish_envelope(self, envelope, idempotency_key=None, credential=None, quota=None):
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
        CredentialRefused. With ``quota`` (a :class:`Quota`) the publish counts
        against its rate limits in that step too, and one past its amount
        writes nothing: QuotaExceeded.
        """
        [published], replayed = self._publish([rules.validate(envelope)],
                                              idempotency_key, credential, quota)
        return dict(published, replayed=True) if replayed else published

    def publish_envelopes(self, envelopes, idempotency_key=None, credential=None, quota=None):
        """Validate and publish a list of envelopes, all or none, in order.

        Returns ``({"notifications": [{"id", "ts"}, ...]}, replayed)``. Every
        envelope is checked before anything is written: an EnvelopeError
        names the one at fault (``notifications[2].topic: ...``). The
        idempotency key covers the whole list, and ``credential`` and ``quota``
        are checked, as in :meth:`publish_envelope` (the list counts as one
        request).
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
        published, replayed = self._publish(clean, idempotency_key, credential, quota)
        return {"notifications": published}, replayed

    def _publish(self, clean, idempotency_key, credential=None, quota=None):
        """Publish validated envelopes; returns (``[{"id", "ts"}]``, replayed).

        With one shard (or all of them in one), in one script. A list that falls in
        several shards (STREAM_SHARDS > 1) is written shard by shard, each part in one
        script, in its shard's slot: all or none *per shard*, the quota counted by the
        first part. A part's idempotency key is the key in that shard, so a retry of a
        list cut short by a failure writes only the parts that were not written."""
        prepared = [_prepare_clean(item) for item in clean]
        # Only an idempotency key keeps it (to tell a retry from another notification).
        digest = "" if idempotency_key is None else fingerprint(clean[0] if len(clean) == 1 else clean)
        parts = {}
        for index, item in enumerate(prepared):
            parts.setdefault(self.shards.of(item.topic, item.user), []).append(index)
        if credential is not None and (self.cluster or len(parts) > 1):
            self._check(credential)
            credential = None
        answers, replayed = [None] * len(prepared), True
        for shard, indexes in parts.items():
            published, again = self._publish_part(
                shard, [prepared[i] for i in indexes], digest, idempotency_key, credential, quota)
            quota = None  # counted once, by the first part
            replayed = replayed and again
            for index, answer in zip(indexes, published, strict=True):
                answers[index] = answer
        return answers, replayed

    def _publish_part(self, shard, prepared, digest, idempotency_key, credential, quota):
        """One script in ``shard``: (``[{"id", "ts"}]``, replayed)."""
        keys, args = self.script_call(shard, prepared, digest, idempotency_key, credential, quota)
        try:
            written, value = self._run(self._script, keys, args, shard)
        except NotReplicated as exc:
            raise BusUnavailable(str(exc)) from exc
        except UNAVAILABLE as exc:
            raise BusUnavailable(f"Redis is unreachable: {exc}") from exc
        if written == -1:
            raise CredentialRefused("the credential was revoked")
        if written == -2:
            raise QuotaExceeded(int(value) - 1)
        if written:
            return scripts.pairs(scripts.text(value).split(" ")), False
        first_digest, stored = scripts.stored_answer(scripts.text(value))
        if first_digest != digest or len(stored) != len(prepared):
            raise IdempotencyConflict("idempotency key: already used for a different notification")
        return stored, True

    def script_call(self, shard, prepared, digest, idempotency_key=None, credential=None,
                    quota=None):
        """``(keys, args)`` of the publish script writing ``prepared`` in ``shard``
        (publish_scripts.PUBLISH; bench/redis_ceiling.py sends it as it is)."""
        once = "" if idempotency_key is None else \
            shard.once + hashlib.sha256(idempotency_key.encode()).hexdigest()
        keys = [shard.stream, shard.epoch, shard.last_id]
        args = [scripts.live_command(shard), shard.suffix, shard.live, self.history_max, IDEMPOTENCY_TTL,
                digest, "", 0, 0, 0]
        if once:
            keys.append(once)
            args[7] = len(keys)
        if credential is not None:
            keys.append(credential.key)
            args[6], args[8] = credential.holder, len(keys)
        if quota is not None:
            keys += quota.keys
            args[9] = len(quota.keys)
            args += quota.arguments()
        for item in prepared:
            args += [item.raw, item.topic, item.user, item.ts]
        return keys, args

    def _run(self, script, keys, args, shard):
        if self.durability.replicas:
            return replicated.run(self.client, script, keys, args, self.durability, shard.stream)
        return script(keys=keys, args=args)

    def _check(self, credential):
        try:
            holder = self.client.get(credential.key)
        except UNAVAILABLE as exc:
            raise BusUnavailable(f"Redis is unreachable: {exc}") from exc
        if holder is None or scripts.text(holder) != credential.holder:
            raise CredentialRefused("the credential was revoked")

    def spend(self, quota):
        """Count one request against ``quota``'s limits, for a publish refused before
        the script (a bad body); raises QuotaExceeded past a limit. Raises
        BusUnavailable when Redis cannot be reached."""
        try:
            past = self._spend_script(keys=list(quota.keys), args=quota.arguments())
        except UNAVAILABLE as exc:
            raise BusUnavailable(f"Redis is unreachable: {exc}") from exc
        if past:
            raise QuotaExceeded(int(past) - 1)

    def publish(self, topic, title, idempotency_key=None, **fields):
        """Publish a notification given as keywords; returns its id."""
        envelope = dict(fields, topic=topic, title=title)
        return self.publish_envelope(envelope, idempotency_key)["id"]

    def publish_batch(self, prepared, batch_id):
        """Publish many :class:`Prepared` notifications in one round trip, in order.

        All or none are written (one Lua script). Returns their ids. Raises
        a Redis connection error when Redis cannot be reached. ``batch_id`` (a
        string unique to the batch) keeps its ids, under ``keys.BATCH + batch_id``
        in the stream's slot, for an hour: the same batch published again (after
        a lost reply) is not written twice but answered its ids, and
        :meth:`batch_outcome` tells whether it was written.
        """
        parts = {}
        for index, item in enumerate(prepared):
            parts.setdefault(self.shards.of(item.topic, item.user), []).append(index)
        ids = [None] * len(prepared)
        for shard, indexes in parts.items():  # shard by shard, each all or none (_publish)
            args = [scripts.live_command(shard), shard.suffix, shard.live, self.history_max, BATCH_KEY_TTL]
            for index in indexes:
                item = prepared[index]
                args += [item.raw, item.topic, item.user]
            written = self._run(self._batch_script,
                                [shard.stream, shard.batch + batch_id, shard.epoch, shard.last_id],
                                args, shard)
            for index, entry_id in zip(indexes, written, strict=True):
                ids[index] = scripts.text(entry_id)
        return ids

    def batch_outcome(self, batch_id):
        """The ids batch ``batch_id`` got (those of the shards it was written in, in
        shard order), or None if it was not written."""
        ids = []
        for shard in self.shards:
            value = self.client.get(shard.batch + batch_id)
            ids += value.decode().split(" ") if value else []
        return ids or None


_default_bus = None


def durability(config=None):
    """The :class:`Durability` the settings ask for (PUBLISH_REPLICAS, PUBLISH_REPLICA_TIMEOUT),
    from ``config`` (a Flask app's) or the environment."""
    read = config.__getitem__ if config is not None else get
    return Durability(read("PUBLISH_REPLICAS"), round(read("PUBLISH_REPLICA_TIMEOUT") * 1000))


def default_bus():
    """A Bus on ``REDIS_URL`` (or the private Redis), made once per process."""
    global _default_bus
    if _default_bus is None:
        _default_bus = Bus(key_layout.connect(redis_url()), history_max(), durability())
    return _default_bus


def publish(topic, title, *, bus=None, **fields):
    """Publish one notification and return its id.

    ``fields`` are the optional envelope fields: body, severity, data, user,
    origin, correlation_id; and ``idempotency_key``, to store it at most once
    (see :meth:`Bus.publish_envelope`). Raises EnvelopeError, BusUnavailable
    or IdempotencyConflict.
    """
    return (bus or default_bus()).publish(topic, title, **fields)
