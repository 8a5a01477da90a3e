"""What the archiver reads of the history: every shard's stream past its position, and
how far behind the newest entries that position is.

With one shard (``STREAM_SHARDS=1``) this is one ``XREAD`` of ``herald:stream``,
waiting up to BLOCK_MS for something new, as ever. A sharded history
(app/stream/shards.py) has a position per shard (an archived notification id,
``<ms>-<seq>-<k>`` in shard k, or None before the first): on one Redis a single
``XREAD`` reads every shard's stream; on a Redis Cluster, where one command reaches
one shard's slot only, each shard is read by an ``XREAD`` of its own, and when none
has anything the archiver waits on each in turn for a share of BLOCK_MS.
"""
from app.redis_client import is_cluster
from app.stream.envelope import id_key
from app.stream.shards import stream_id

READ_COUNT = 1000
BLOCK_MS = 1000


def read(client, shards, positions):
    """``[(shard, entries)]``: what the ``shards`` hold past their ``positions`` (at
    most READ_COUNT each), waiting up to BLOCK_MS for something when none holds any."""
    if len(shards) == 1 or not is_cluster(client):  # one XREAD reads them all
        replies = client.xread({shard.stream: _after(positions, shard) for shard in shards},
                               count=READ_COUNT, block=BLOCK_MS)
        named = {shard.stream: shard for shard in shards}
        return [(named[_text(name)], entries) for name, entries in replies]
    found = [(shard, _read_one(client, positions, shard, None)) for shard in shards]
    found = [(shard, entries) for shard, entries in found if entries]
    if found:
        return found
    share = max(BLOCK_MS // len(shards), 1)
    for shard in shards:
        entries = _read_one(client, positions, shard, share)
        if entries:
            return [(shard, entries)]
    return []


def _read_one(client, positions, shard, block):
    replies = client.xread({shard.stream: _after(positions, shard)}, count=READ_COUNT,
                           block=block)
    return replies[0][1] if replies else []


def _after(positions, shard):
    """The stream id ``shard`` is read on after."""
    return stream_id(positions[shard.index] or "0-0")


def lag_seconds(client, shards, positions):
    """Seconds between a shard's newest entry and its position: the most of any shard's
    (0 for a shard with nothing archived yet)."""
    behind = 0
    for shard in shards:
        newest = client.xrevrange(shard.stream, count=1)
        position = positions[shard.index]
        if newest and position is not None:
            behind = max(behind, id_key(newest[0][0])[0] - id_key(position)[0])
    return round(behind / 1000, 3)


def _text(name):
    return name.decode() if isinstance(name, bytes) else name
