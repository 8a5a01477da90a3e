"""The Redis key and channel names that more than one part of Herald uses.

Every process of a deployment (web processes, workers, the ZeroMQ bridge,
Spark drivers) meets the others through these names, so they are spelled
once, here. Names one package keeps to itself (a user's subscription set, the
presence hashes, a worker's lease) stay with that package.

This module imports nothing, so anything may import it.
"""

# The history: a stream whose entry ids are the notification ids.
STREAM = "herald:stream"

# Pub/sub: each notification's live copy, id included, published with its
# history entry in one step (app.stream.publish).
LIVE = "herald:live"

# Pub/sub: changes every web process must pass on to its connections
# (subscriptions, read state, archive and snooze, presence, revoked
# credentials); their messages are written and read by app.stream.control.
CONTROL = "herald:control"

# What is written in one step with the stream (by the publish scripts) lives in the
# stream's hash slot: on a Redis Cluster a script's keys must share one slot, and a
# key's slot is that of its hash tag. The tag is the stream's own name, whose slot is
# the stream's (a name without a tag is hashed whole), so the stream keeps its name,
# and every id it gave, on one Redis and on a cluster alike (app/key_layout.py).
STREAM_TAG = "{" + STREAM + "}"


def with_stream(name):
    """The name of a key kept in the stream's slot: ``herald:{herald:stream}:<name>``."""
    return f"herald:{STREAM_TAG}:{name}"


# The id of the stream's first entry since it was (re)created: a client's
# cursor from before it belongs to another stream (app.stream.history).
EPOCH = with_stream("epoch")

# The greatest id herald:stream ever gave (as of its last publish), kept apart from it so
# that a DEL of the stream leaves it: a stream made anew goes on above it, where Redis
# would start from its clock, at or below the old ids when recreated within the same
# millisecond (or after the clock stepped back), and whoever follows the stream by the
# last id it saw would skip them (app.stream.publish_scripts, app.stream.groups).
LAST_ID = with_stream("last-id")

# Prefixes of keys the publish scripts write with the stream: an idempotency key's
# first answer (+ the key's SHA-256), a bridge batch's ids (+ the batch's uuid), and
# an API key's publish rate-limit counters (app.web.publish_quota).
ONCE = with_stream("once:")
BATCH = with_stream("batch:")
QUOTA = with_stream("quota:")


def group_epoch(group):
    """Where the epoch consumer group ``group`` was made in is kept (app.stream.groups)."""
    return with_stream(f"group-epoch:{group}")

# String per user name: the account's "born" floor, the last stream id generated
# before the account with this name was created (or, once deleted, before it was
# deleted). Private notifications to that name with an id at or below it
# belonged to someone else and are never shown to the name's holder; no key (a
# host app's user who never had an account): no floor (app.stream.history,
# app.users.purge).
BORN = "herald:born:"

# Hash: the counters workers add to (bridge, digests, Spark jobs, webhooks),
# shown by every web process's /metrics (app.ops.metrics).
METRICS_WORKERS = "herald:metrics:workers"
