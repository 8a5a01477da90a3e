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

# The id of the stream's first entry since it was (re)created: a client's
# cursor from before it belongs to another stream (app.stream.history).
EPOCH = "herald:epoch"

# The greatest id herald:stream ever gave (as of its last publish), kept apart from it so
# that a DEL of the stream leaves it: a stream made anew goes on above it, where Redis
# would start from its clock, at or below the old ids when recreated within the same
# millisecond (or after the clock stepped back), and whoever follows the stream by the
# last id it saw would skip them (app.stream.publish_scripts, app.stream.groups).
LAST_ID = "herald:last-id"

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
