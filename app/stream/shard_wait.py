"""One wait for new entries on every shard's stream at once, for a consumer group reader.

With a sharded history (``STREAM_SHARDS=N``, app/stream/shards.py) a group reader
(app/stream/groups.py) must wake for an entry in any shard, as soon as it comes, as
one ``XREADGROUP … BLOCK`` does on one stream. One command may touch one shard's
keys only (a Redis Cluster runs none across slots; on one Redis the rule is kept),
so :func:`wait_any` sends each shard's ``XREADGROUP … BLOCK`` at once, each on a
connection of its own from the pool of the Redis that holds the shard, after a
``CLIENT ID`` on it. The first answer (entries, or an error) ends the wait: the
others' reads are ended by ``CLIENT UNBLOCK`` (they answer as at their timeout,
or with their entries when some came meanwhile), and every answer is read, so
nothing read is dropped and no connection goes back to its pool with an answer
unread. Should anything fail on the way, those connections are closed instead.
Where Redis refuses ``CLIENT ID`` or ``CLIENT UNBLOCK`` (an ACL user without them),
the others' reads are waited out instead (``block_ms`` at most): slower, not wrong.

Costs: a wait is N connections busy at once, and one round trip (plus an UNBLOCK
for each shard still waiting) whichever shard answers; idle, each shard's read
comes back after ``block_ms`` as it would alone.
"""
import select
import time

import redis

from app.redis_client import pool_for

WAIT_GRACE = 1.0  # seconds past BLOCK before the server is taken to have answered
UNBLOCK_TRIES = 200  # times an UNBLOCK is sent to a read Redis has not begun yet (1 ms apart)


def wait_any(client, shards, group, consumer, count, block_ms):
    """``XREADGROUP GROUP group consumer COUNT count BLOCK block_ms`` on every shard's
    stream from ``>``, until the first answers; ``[(shard, answer)]`` in shard order,
    an answer being the shard's entries (``[(notification id, fields)]``) or the
    ``redis.ResponseError`` it answered (NOGROUP, UNBLOCKED, MOVED: the caller's)."""
    links, answers = [], []
    try:
        for shard in shards:
            pool = pool_for(client, shard.stream)
            links.append((shard, pool, pool.get_connection()))
            connection = links[-1][2]
            connection.send_command("CLIENT", "ID")
            connection.send_command("XREADGROUP", "GROUP", group, consumer, "COUNT", count,
                                    "BLOCK", block_ms, "STREAMS", shard.stream, ">")
        ids = [_client_id(connection) for _, _, connection in links]
        waiting = _first_answer([connection for _, _, connection in links], block_ms)
        for index in waiting:
            _unblock(links[index][1], links[index][2], ids[index])
        for shard, _, connection in links:
            try:
                answers.append((shard, entries(shard, connection.read_response())))
            except redis.ResponseError as exc:  # read whole: the connection is fine
                answers.append((shard, exc))
    except BaseException:
        for _, _, connection in links:  # an answer may be left unread on it
            connection.disconnect()
        raise
    finally:
        for _, pool, connection in links:
            pool.release(connection)
    return answers


def entries(shard, reply):
    """``[(notification id, fields)]`` of an ``XREADGROUP`` reply as Redis sent it (one
    stream's: ``[[stream, [[id, [field, value, ...]], ...]]]``, or a map with RESP3): as
    redis-py's own reply would be, the ids under the shard's suffix (shards.Shard.public)
    and as bytes, an entry trimmed away meanwhile with no fields (``{}``)."""
    if not reply:
        return []
    streams = reply.values() if isinstance(reply, dict) else [item[1] for item in reply]
    found = []
    for stream_entries in streams:
        for entry_id, pairs in stream_entries:
            fields = dict(zip(pairs[::2], pairs[1::2], strict=True)) if pairs else {}
            found.append((shard.public(entry_id).encode() if shard.index else entry_id, fields))
    return found


def _first_answer(connections, block_ms):
    """Wait until one of ``connections`` has an answer (or ``block_ms``, with some grace,
    is over; ``0``: however long it takes); the indexes of those that have none yet."""
    deadline = time.monotonic() + block_ms / 1000 + WAIT_GRACE if block_ms else None
    while True:
        waiting = [i for i, connection in enumerate(connections) if not connection.can_read(0)]
        if len(waiting) < len(connections):
            return waiting
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return waiting
        sockets = [getattr(connection, "_sock", None) for connection in connections]
        if None in sockets:  # a connection class without a socket to wait on: poll
            time.sleep(0.01 if left is None else min(left, 0.01))
        else:  # can_read looked at what was already buffered: the sockets tell the rest
            select.select(sockets, [], [], left)


def _client_id(connection):
    """The answer to the ``CLIENT ID`` sent on ``connection``; None when it was refused."""
    try:
        return connection.read_response()
    except redis.ResponseError:  # NOPERM (an ACL), or a Redis without it: no UNBLOCK then
        return None


def _unblock(pool, waiting, client_id):
    """End the wait of ``waiting`` (Redis's client ``client_id``, on the Redis of ``pool``)
    as a timeout would. A read whose command Redis has not run yet is not waiting, and
    ``CLIENT UNBLOCK`` answers 0: it is sent again (up to UNBLOCK_TRIES times) until it
    ends a wait or the read has answered, so the read does not wait out its BLOCK.
    Without a client id, or refused, the read is left to answer at its timeout."""
    for _ in range(UNBLOCK_TRIES if client_id is not None else 0):
        if waiting.can_read(0):
            return
        connection = pool.get_connection()
        try:
            connection.send_command("CLIENT", "UNBLOCK", client_id)
            ended = connection.read_response()
        except redis.ResponseError:  # refused (NOPERM): read whole, the connection is fine
            return
        except BaseException:
            connection.disconnect()
            raise
        finally:
            pool.release(connection)
        if ended:
            return
        time.sleep(0.001)
