"""One replay, as Socket.IO connections and event streams both need it.

A connection (or stream) that resumes from ``last_id`` is *held* by the seam
from before history is read (seam.hold), so nothing published meanwhile is
lost. :func:`steps` reads what it missed and yields what to send, in order:

- ``("reset", {...})`` when ``last_id`` is past history (or from another
  epoch of the stream): not recoverable;
- ``("notifications", [(id, text)])``, page by page: each notification's id
  and its JSON as the relay delivered it (sent as it is, never re-encoded);
- then it releases the hold and calls ``go_live(topics)``, with no I/O
  between the two (gevent switches only on I/O), so every later notification
  reaches the connection live and the held ones the replay covered are dropped;
- ``("notifications", pending)``: what came while it was held, past the replay;
- ``("replayed", {"recovered", "count", "last_id"})``.

History is read from the window of recent notifications in memory
(recent.py) wherever it covers the cursor, and from Redis before that: a
reconnect storm's thousands of replays of the last seconds cost no Redis
read and no JSON work. The release happens only once the window covers the
cursor (checked in the same step, with no I/O in between), so that what the
relay delivered meanwhile is there to hand over.

The caller sends each step (Socket.IO events, SSE events). ``gone()`` says the
connection went away meanwhile: the replay stops, before any release (the
caller then forgets the hold).
"""
import time

import redis

from app.realtime.seam import visible
from app.stream import history, state
from app.stream.envelope import id_key

RESET = {"reason": "last_id is older than the retained history"}
# Notifications sent per step: a bounded page, so that each step is short and
# the caller can let other greenlets run between steps (a replay never holds
# the loop for long, however much it has to send).
PAGE = 200
WAIT_STEP, WAIT_STEPS = 0.05, 200  # for the relay to begin: 10 s at most


class NotFollowing(redis.ConnectionError):
    """The relay has not begun following the stream: what a replay would hand over is
    not known yet. Handled as Redis being unreachable (the client comes back)."""


def newest(*ids):
    """The newest of stream ids (None ones ignored), or None."""
    present = [i for i in ids if i]
    return max(present, key=id_key) if present else None


class _Floor:
    """The user's born floor (history.floor_of), read from Redis only when a private
    notification of theirs is found (most replays have none)."""

    def __init__(self, client, user):
        self.client, self.user, self.value, self.read = client, user, None, False

    def __call__(self):
        if not self.read:
            self.value, self.read = history.floor_of(self.client, self.user), True
        return self.value


_UNREAD = object()


def steps(client, seam, key, user, topics, last_id, go_live, gone=lambda: False, info=_UNREAD):
    """Yield ``(event, payload)`` for the replay of ``key`` (held by ``seam``).

    ``info``: the stream's state (state.stream_info) when the caller read it
    already, during the connect (the replays of a moment share one read). Read
    before or after the hold alike: it says only whether ``last_id`` is still in
    history (a cursor the client had before it connected is never past it) and
    what the window may no longer hold; what the relay delivers meanwhile is in
    the window whichever came first.
    """
    cursor, count = last_id, 0
    if info is _UNREAD:
        info = state.stream_info(client)
    # The window holds nothing the stream does not (it was trimmed, replaced or lost, or
    # entries were deleted from it): what is replayed is what REST reads for the cursor.
    seam.recent.forget_before(state.first_retained(info))
    seam.recent.agree(client, info)
    # 0 asks for all the history there is, which cannot have a gap.
    recovered = not (id_key(last_id) > (0, 0) and state.missed_history(client, last_id, info))
    if not recovered:
        yield "reset", RESET
        cursor = None
    else:
        recent, floor, waits = seam.recent, _Floor(client, user), 0
        while not recent.covers(id_key(cursor)):  # older than the window: from Redis
            before = cursor
            pages = history.replay(client, user, topics, before, chunk=PAGE, raw=True)
            for found, cursor in pages:  # noqa: B007
                if gone():
                    return
                if found:
                    yield "notifications", found
                    count += len(found)
            if gone():
                return
            if cursor == before and not recent.covers(id_key(cursor)):
                # At the stream's end and still not covered: the relay has not begun
                # following yet (a process just started); it will, shortly.
                waits += 1
                if waits > WAIT_STEPS:
                    raise NotFollowing("the relay is not following the stream yet; retry")
                time.sleep(WAIT_STEP)
        while True:  # from the window; the release follows its last check, no I/O between
            entries = recent.after(id_key(cursor))
            if not entries:
                break
            cursor = entries[-1][0]
            mine = any(owner == user for _i, _t, owner, _x in entries)
            found = visible(entries, user, topics, floor() if mine else None)
            for start in range(0, len(found), PAGE):
                if gone():
                    return
                yield "notifications", found[start:start + PAGE]
            count += len(found)
            if gone():
                return
            if not recent.covers(id_key(cursor)):  # let go meanwhile (a flood): go round
                yield from _rest(client, seam, key, user, topics, cursor, count, go_live, gone)
                return
    if gone():
        return
    # From here to go_live: no I/O, so no other greenlet runs.
    live_topics, pending = seam.release(key, cursor)
    go_live(live_topics)
    if pending:
        yield "notifications", pending
        cursor = newest(cursor, pending[-1][0])
    yield "replayed", {"recovered": recovered, "count": count + len(pending),
                       "last_id": newest(cursor, seam.follower.position)}


def _rest(client, seam, key, user, topics, cursor, count, go_live, gone):
    """The replay from ``cursor`` on, when the window moved past it while pages
    were sent: read from Redis again, then from the window, as :func:`steps`."""
    for event, payload in steps(client, seam, key, user, topics, cursor, go_live, gone):
        if event == "replayed":
            payload = dict(payload, count=payload["count"] + count)
        yield event, payload
