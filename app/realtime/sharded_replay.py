"""One replay over a sharded history (STREAM_SHARDS > 1: app/stream/shards.py).

The cursor is one position per shard. Each shard is replayed as replay.py replays
the one stream: from Redis while its lane's window of recent notifications does not
cover the cursor's position there, then from the window. The shards go one after
the other, each in id order. Then, in one step with no I/O (so no other greenlet
runs), every lane's window must still cover where its replay ended (else the shards
that fell behind go round again), and every lane's seam releases the connection,
handing over what its relay delivered meanwhile, and the connection joins its rooms:
no gap and no duplicate, in every shard.

Shards that none of the connection's subscriptions (nor its private notifications)
fall in hold nothing it may see: they are not read, and its position there moves to
where the relay is, so that a cursor never ages in a shard the client has no reason
to hear from (and a replay never says ``recovered: false`` for history trimmed
there).

A cursor that is not exact (a single id, as a client from before the history was
sharded passes back, or one from another number of shards), or a shard whose
history was trimmed past its position, or from another epoch: ``reset``, then live,
as replay.py does for the one stream.
"""
import time

from app.realtime.replay import PAGE, RESET, WAIT_STEP, WAIT_STEPS, NotFollowing, _Floor, newest
from app.realtime.seam import visible
from app.stream import history, state
from app.stream.envelope import id_key
from app.stream.shards import stream_id

ROUNDS = 20  # times the shards go round when a flood moved a window past a replay


def stream_infos(client, lanes):
    """Each lane's stream's state (state.stream_info), in shard order."""
    return [state.stream_info(client, lane.shard) for lane in lanes]


def steps(client, seam, key, user, topics, last_id, go_live, gone=lambda: False, info=None):
    """Yield ``(event, payload)`` for the replay of ``key`` (held by ``seam``, a
    lanes.ShardedSeam), as replay.steps does; ``info``: :func:`stream_infos`, when the
    caller read it already."""
    lanes, shards = seam.lanes, seam.shards
    positions, exact = shards.parse(last_id)
    infos = info if isinstance(info, list) and len(info) == len(lanes) else \
        stream_infos(client, lanes)
    needed = shards.needed(user, topics)
    for lane, lane_info in zip(lanes, infos, strict=True):
        lane.recent.forget_before(state.first_retained(lane_info))
        lane.recent.agree(client, lane_info)
    recovered = exact and not any(
        id_key(positions[k]) > (0, 0)
        and state.missed_history(client, positions[k], infos[k], lanes[k].shard)
        for k in needed)
    cursors, count = [None] * len(lanes), 0
    if not recovered:
        yield "reset", RESET
    else:
        for k in needed:
            cursors[k] = positions[k]
        for _round in range(ROUNDS):
            for k in sorted(needed):
                ended = yield from _catch_up(client, lanes[k], user, topics, cursors[k], gone)
                if ended is None:
                    return
                cursors[k], found = ended
                count += found
            # No I/O from here to go_live: the windows are as the release will find them.
            if all(lanes[k].recent.covers(id_key(cursors[k])) for k in needed):
                break
        else:
            raise NotFollowing("the relay's windows keep moving past this replay; retry")
    if gone():
        return
    pending, reached, live_topics = [], [], None
    for k, lane in enumerate(lanes):
        live_topics, mine = lane.seam.release(key, cursors[k])
        pending += mine
        last = mine[-1][0] if mine else None
        reached.append(stream_id(newest(cursors[k], last, seam.follower.where(k)) or "0-0"))
    go_live(live_topics)
    if pending:
        yield "notifications", pending
    yield "replayed", {"recovered": recovered, "count": count + len(pending),
                       "last_id": shards.format(reached)}


def _catch_up(client, lane, user, topics, cursor, gone):
    """Send what ``lane``'s shard holds past ``cursor`` (a stream id) that ``user`` may
    see, from Redis until the lane's window covers it, then from the window; yields
    ``("notifications", page)``; returns ``(cursor, count)`` where it ended (None: the
    connection went away)."""
    recent, floor, count, waits = lane.recent, _Floor(client, user), 0, 0
    while True:
        while not recent.covers(id_key(cursor)):  # older than the window: from Redis
            before = cursor
            for found, cursor in history.replay(client, user, topics, stream_id(before),  # noqa: B007
                                                chunk=PAGE, raw=True, shard=lane.shard):
                if gone():
                    return None
                if found:
                    yield "notifications", found
                    count += len(found)
            if gone():
                return None
            if id_key(cursor) == id_key(before) and not recent.covers(id_key(cursor)):
                waits += 1  # at the stream's end, not covered: the relay has not begun
                if waits > WAIT_STEPS:
                    raise NotFollowing("the relay is not following the stream yet; retry")
                time.sleep(WAIT_STEP)
        entries = recent.after(id_key(cursor))
        if not entries:
            return cursor, count
        cursor = entries[-1][0]
        mine = any(owner == user for _i, _t, owner, _x in entries)
        found = visible(entries, user, topics, floor() if mine else None)
        for start in range(0, len(found), PAGE):
            if gone():
                return None
            yield "notifications", found[start:start + PAGE]
        count += len(found)
        if gone():
            return None
