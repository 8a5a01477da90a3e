"""A user's feed read over a sharded history (STREAM_SHARDS > 1: app/stream/shards.py).

Each shard is read as history.py reads the one stream; the pages are merged by id
(time, then shard: there is no other order between shards). Only the shards the
user's subscriptions and private notifications fall in are read.

The cursors (``last_id``, ``next_before``) are one position per shard. A shard whose
notifications were not all taken into a page (the merge cut it) resumes after the
last one taken; one that was read to its end, where its read ended; one that was not
read (nothing there is the user's), at its newest entry when reading the newest
page, else where it was.
"""
from app.stream import history
from app.stream.envelope import id_key
from app.stream.filters import EVERYTHING
from app.stream.shards import stream_id


def feed_after(client, shards, user, topics, positions, limit, wanted=EVERYTHING):
    """Up to ``limit`` of the user's notifications past ``positions`` (one stream id per
    shard), oldest first; and the cursor (a string) after them."""
    reads = {k: history.feed_after(client, user, topics, positions[k], limit, wanted,
                                   shard=shards[k])
             for k in sorted(shards.needed(user, topics))}
    merged = _merged(reads, limit, newest_first=False)
    chosen = {e["id"] for e in merged}
    reached = list(positions)
    for k, (found, cursor) in reads.items():
        taken = [e for e in found if e["id"] in chosen]
        if len(taken) == len(found):
            reached[k] = stream_id(cursor)
        elif taken:  # the merge cut it: on after the last one taken
            reached[k] = stream_id(taken[-1]["id"])
    return merged, shards.format(reached)


def feed_latest(client, shards, user, topics, limit, wanted=EVERYTHING, before=None):
    """The user's ``limit`` newest notifications (older than ``before``, one stream id
    per shard, if given), oldest first; the cursor of every shard's newest entry (None
    when there is no history); and ``before`` of the next page back (None when every
    shard's start was reached)."""
    needed = sorted(shards.needed(user, topics))
    reads = {k: history.feed_latest(client, user, topics, limit, wanted,
                                    before[k] if before else None, shard=shards[k])
             for k in needed}
    merged = _merged({k: (found,) for k, (found, _end, _next) in reads.items()}, limit,
                     newest_first=True)
    chosen = {e["id"] for e in merged}
    ends, back, more = [], [], False
    for k in range(len(shards)):
        if k not in reads:  # nothing of the user's there
            ends.append(history.newest_id(client, shards[k]))
            back.append("0-0")
            continue
        found, end, following = reads[k]
        ends.append(end or "0-0")
        taken = [e for e in found if e["id"] in chosen]
        if len(taken) < len(found):  # the merge cut it: back on from the oldest taken
            # (none taken: from where this page began in it; the newest page began at
            # its newest entry, which ``before`` leaves out: above it, then)
            back.append(stream_id(taken[0]["id"]) if taken else
                        before[k] if before else _past(end))
            more = True
        else:
            back.append(stream_id(following) if following else "0-0")
            more = more or following is not None
    cursor = shards.format(ends) if any(id_key(e) > (0, 0) for e in ends) else None
    return merged, cursor, shards.format(back) if more else None


def _merged(reads, limit, newest_first):
    """The first ``limit`` of the reads' notifications (``{shard: (found, ...)}``, each
    oldest first) by id, then shard; oldest first."""
    every = [(id_key(e["id"]), k, e) for k, (found, *_rest) in reads.items() for e in found]
    every.sort(key=lambda item: item[:2], reverse=newest_first)
    chosen = every[:limit]
    if newest_first:
        chosen.reverse()
    return [e for _key, _k, e in chosen]


def _past(entry_id):
    """The smallest stream id above ``entry_id`` (a ``before`` that includes it)."""
    ms, seq = id_key(entry_id)
    return f"{ms}-{seq + 1}"
