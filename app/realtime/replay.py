"""One replay, as Socket.IO connections and event streams both need it.

A connection (or stream) that resumes from ``last_id`` is *held* by the seam
from before history is read (seam.hold), so nothing published meanwhile is
lost. :func:`steps` reads what it missed and yields what to send, in order:

- ``("reset", {...})`` when ``last_id`` is past history (or from another
  epoch of the stream): not recoverable;
- ``("notifications", [envelopes])``, chunk by chunk;
- then it releases the hold and calls ``go_live(topics)``, with no I/O
  between the two (gevent switches only on I/O), so every later notification
  reaches the connection live and the held ones the replay covered are dropped;
- ``("notifications", pending)``: what came while it was held, past the replay;
- ``("replayed", {"recovered", "count", "last_id"})``.

The caller sends each step (Socket.IO events, SSE events). ``gone()`` says the
connection went away meanwhile: the replay stops, before any release (the
caller then forgets the hold).
"""
from app.stream import history
from app.stream.envelope import id_key

RESET = {"reason": "last_id is older than the retained history"}
# Entries read from history per step: a bounded page, so that each step is
# short and the caller can let other greenlets run between steps (a replay
# never holds the loop for long, however much it has to send).
PAGE = 200


def newest(*ids):
    """The newest of stream ids (None ones ignored), or None."""
    present = [i for i in ids if i]
    return max(present, key=id_key) if present else None


def steps(client, seam, key, user, topics, last_id, go_live, gone=lambda: False):
    """Yield ``(event, payload)`` for the replay of ``key`` (held by ``seam``)."""
    cursor, count = last_id, 0
    # 0 asks for all the history there is, which cannot have a gap.
    recovered = not (id_key(last_id) > (0, 0) and history.missed_history(client, last_id))
    if not recovered:
        yield "reset", RESET
        cursor = None
    else:
        for visible, cursor in history.replay(client, user, topics, last_id, chunk=PAGE):  # noqa: B007
            if gone():
                return
            if visible:
                yield "notifications", visible
                count += len(visible)
    if gone():
        return
    # From here to go_live: no I/O, so no other greenlet runs.
    live_topics, pending = seam.release(key, cursor)
    go_live(live_topics)
    if pending:
        yield "notifications", pending
        cursor = newest(cursor, pending[-1]["id"])
    yield "replayed", {"recovered": recovered, "count": count + len(pending),
                       "last_id": newest(cursor, seam.follower.position)}
