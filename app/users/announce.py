"""Announcing a change on ``herald:control`` in the MULTI/EXEC that makes it.

A user's change and its announcement are one step: every web process hears
the changes of one user in the order they were applied, and never hears of one
that was not. On one Redis that is a PUBLISH queued in the transaction. On a
Redis Cluster the server would run it just as well (PUBLISH has no key, so it
fits any slot's transaction, and the cluster passes the message to every
node), but redis-py's cluster pipeline refuses PUBLISH (it takes the channel
for a key, in some other slot). So the PUBLISH is queued as a one-line script
that names one key of the transaction: the script runs in the transaction's
slot, inside MULTI/EXEC, on one Redis and on a cluster alike.

    with client.pipeline(transaction=True) as pipe:
        pipe.zadd(key, {...})
        announce(pipe, key, control.state(user, change))
        pipe.execute()
"""
from app.stream.keys import CONTROL

# KEYS[1]: a key of the transaction (it only names the slot). ARGV: channel, message.
_PUBLISH = "return redis.call('PUBLISH', ARGV[1], ARGV[2])"


def announce(pipe, slot_key, message):
    """Queue the PUBLISH of ``message`` on herald:control in ``pipe``'s transaction;
    ``slot_key``: one of the keys the transaction writes."""
    pipe.execute_command("EVAL", _PUBLISH, 1, slot_key, CONTROL, message)
