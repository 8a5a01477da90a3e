"""Topics and ids for tests of a sharded history (app/stream/shards.py)."""
from app.stream.envelope import id_key


def topic_per_shard(shards, stem="sh"):
    """One topic in each of ``shards`` (a Shards), in shard order: ``<stem><n>.x``."""
    found = {}
    for n in range(10_000):
        topic = f"{stem}{n}.x"
        found.setdefault(shards.of_topic(topic).index, topic)
        if len(found) == len(shards):
            return [found[k] for k in range(len(shards))]
    raise AssertionError("no topic found for every shard")


def in_shard(notification_id, index):
    """The id of the same ``<ms>-<seq>`` in shard ``index`` (a notification id)."""
    ms, seq = id_key(notification_id)
    return f"{ms}-{seq}" + (f"-{index}" if index else "")


def history(redis, shards=None):
    """``[(notification id, fields)]`` of every shard's stream (of this process's shards by
    default), by time, then shard: with one shard, ``herald:stream`` as it is."""
    from app.stream.shards import configured

    found = []
    for shard in shards or configured():
        found += [(shard.public(entry_id), fields, shard.index)
                  for entry_id, fields in redis.xrange(shard.stream)]
    found.sort(key=lambda entry: (id_key(entry[0]), entry[2]))
    return [(entry_id, fields) for entry_id, fields, _ in found]


def history_length(redis, shards=None):
    """How many entries every shard's stream holds."""
    from app.stream.shards import configured

    return sum(redis.xlen(shard.stream) for shard in shards or configured())
