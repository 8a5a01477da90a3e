"""What a topic-limited token may touch: the rule of docs/contract.md's capability table.

A host-app token with a ``topics`` claim reads and acts on its topics only:

- account-wide changes (preferences, mark-all-read with ``upto``, the
  ``seen`` watermark, tokens, digests, webhooks) are refused to it
  (app/web/api/access.py, ``account``; :func:`check_read`);
- a per-notification action (archive, snooze, read, unread...) is refused with
  403 when one of its ids is not a notification the token may see: private
  to its user, or on a topic inside its ``topics`` (an id no longer in
  history cannot be shown to be, so it is refused too);
- what it reads of the user's state (read and archive/snooze state) is
  narrowed to such ids.

A full token or session (``limit`` None) is never narrowed.

In a sharded history (``STREAM_SHARDS=N``, app/stream/shards.py) an id is looked
up in the stream of its own shard (``<ms>-<seq>-<k>``: shard k), by its stream id.

    scope.check(client, "alice", ["board"], ids, "archive")  # raises OutOfScope
"""
from app.stream import history
from app.stream.envelope import EnvelopeError, check_stream_id, id_key, within
from app.stream.shards import configured as configured_shards


class OutOfScope(Exception):
    """The action reaches past the token's topics; ``field`` names what (a 403)."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}")
        self.field = field


def owners(client, ids):
    """``{id: (topic, private owner or "")}`` of the ``ids`` still in history (each
    in its shard's stream)."""
    shards = configured_shards()
    located = []
    for entry_id in ids:
        try:
            located.append((entry_id, *shards.locate(entry_id)))
        except (IndexError, ValueError):  # a shard this deployment no longer has: gone
            pass
    with client.pipeline(transaction=False) as pipe:
        for _entry_id, shard, at in located:
            pipe.xrange(shard.stream, min=at, max=at, count=1)
        found = pipe.execute()
    out = {}
    for (entry_id, _shard, _at), entries in zip(located, found, strict=True):
        if entries:
            fields = entries[0][1]
            out[entry_id] = (fields[b"topic"].decode(), fields.get(b"user", b"").decode())
    return out


def visible(client, user, limit, ids):
    """The ``ids`` a token limited to ``limit`` may see (all of them when unlimited)."""
    ids = list(ids)
    if limit is None or not ids:
        return ids
    known = owners(client, ids)
    floor = history.floor_of(client, user)  # private ones older: a former holder's

    def mine(entry_id):
        return known[entry_id][1] == user and (floor is None or id_key(entry_id) > floor)
    return [i for i in ids if i in known and (
        mine(i) if known[i][1] else within(limit, known[i][0]))]


def _well_formed(entry_id):
    try:
        check_stream_id(entry_id, "id")
    except EnvelopeError:
        return False
    return True


def check(client, user, limit, ids, field):
    """Raise OutOfScope unless every one of ``ids`` is one the token may see."""
    if limit is None:
        return
    ids = [i for i in ids if _well_formed(i)]  # the others: the 400 of the action itself
    allowed = set(visible(client, user, limit, ids))
    outside = [i for i in ids if i not in allowed]
    if outside:
        raise OutOfScope(field, f"{outside[0]} is not a notification this token may act on: "
                         f"it is limited to the topics {', '.join(limit)} (and its user's "
                         "private ones); use a full token or a signed-in session")


# Read-state fields that move a watermark over every topic: a limited token may not.
WATERMARKS = {
    "upto": "marks everything read, across all topics",
    "seen": "marks everything shown (the unread badge of every tab), across all topics",
}


def check_read(client, user, limit, data):
    """A read-state change (``{"ids", "upto", "unread", "seen"}``) a limited token
    may make: ``upto`` and ``seen`` are account-wide watermarks, refused whatever
    id they name; ``ids`` and ``unread`` only ids the token may see."""
    if limit is None or not isinstance(data, dict):
        return
    for field, what in WATERMARKS.items():
        if data.get(field) is not None:
            raise OutOfScope(field, f"{what}: a token limited to {', '.join(limit)} may "
                             "mark its own ids only; use a full token or a signed-in session")
    for field in ("ids", "unread"):
        if isinstance(data.get(field), list):
            check(client, user, limit, data[field], field)
