"""The stream's state: how much of its history is left, and whether a cursor is from it.

A reader that resumes from a cursor (a Socket.IO or SSE replay, the
archiver, a webhook endpoint) must know whether what came after it is still
there: the stream is trimmed from its oldest end (``HISTORY_MAX``), and may
be deleted, replaced or lost with Redis's data, which starts a new epoch
(app/stream/publish.py). :func:`stream_info` reads what that takes in one
step; :func:`missed_history` decides.
"""
import weakref

from app.stream.envelope import id_key
from app.stream.shards import configured as configured_shards

_READ = object()


# KEYS: the stream, its epoch. What replay needs of XINFO STREAM and the epoch, in one
# round trip and a reply of a few bytes (XINFO's own carries its first and last
# entries whole): {first entry's id or "", last generated id, entries added,
# length, epoch or "", the greatest id ever deleted with XDEL ("0-0": none)};
# false when there is no stream.
_STATE_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local state = {'', '', 0, 0, redis.call('GET', KEYS[2]) or '', '0-0'}
for i = 1, #info, 2 do
  local name, value = info[i], info[i + 1]
  if name == 'first-entry' then
    if value then state[1] = value[1] end
  elseif name == 'last-generated-id' then state[2] = value
  elseif name == 'entries-added' then state[3] = value
  elseif name == 'length' then state[4] = value
  elseif name == 'max-deleted-entry-id' then state[6] = value end
end
return state
"""
_state_scripts = weakref.WeakKeyDictionary()  # client -> its registered _STATE_LUA


def stream_info(client, shard=None):
    """What XINFO STREAM says of the stream (``first-entry``: ``(id,)`` or None,
    ``last-generated-id``, ``entries-added``, ``length``, ``max-deleted-entry-id``:
    the greatest id XDEL ever removed, ``0-0`` for none; trimming leaves it) and
    its ``epoch`` (None when unset), read in one step; None when the stream does
    not exist. A
    reconnect storm's thousands of replays each ask this: one round trip and a
    small reply, where XINFO STREAM and GET were two and XINFO's reply carried
    two whole entries to parse."""
    shard = shard if shard is not None else configured_shards()[0]
    return parse_stream_info(_state_script(client)(keys=[shard.stream, shard.epoch]))


def ask_stream_info(reads, shard=None):
    """:func:`stream_info` asked of ``reads`` (an app.realtime.batched_reads.BatchedReads)
    with the other reads of the moment, once for all of them; its ``Asked`` gives the
    raw reply (:func:`parse_stream_info`), or raises NoScriptError when Redis does not
    know the script yet (:func:`stream_info` loads it)."""
    shard = shard if shard is not None else configured_shards()[0]
    return reads.ask("evalsha", _state_script(reads.client).sha, 2, shard.stream, shard.epoch,
                     once=("stream_info", shard.stream))


def parse_stream_info(state):
    """:func:`stream_info`'s answer from the script's raw reply."""
    if not state:
        return None
    first, last, added, length, epoch, deleted = (v.decode() if isinstance(v, bytes) else v
                                                  for v in state)
    return {"first-entry": (first,) if first else None, "last-generated-id": last,
            "entries-added": int(added), "length": int(length), "epoch": epoch or None,
            "max-deleted-entry-id": deleted or "0-0"}


def _state_script(client):
    """_STATE_LUA registered with ``client`` (its sha is known without Redis)."""
    script = _state_scripts.get(client)
    if script is None:
        script = _state_scripts[client] = client.register_script(_STATE_LUA)
    return script


def first_retained(info):
    """The id of the oldest entry the stream holds (``info``: :func:`stream_info`), or None."""
    first = info.get("first-entry") if info else None
    if not first:
        return None
    return first[0].decode() if isinstance(first[0], bytes) else first[0]


def missed_history(client, last_id, info=_READ, shard=None):
    """True when notifications after ``last_id`` may have been trimmed away (or lost).

    Trimming removes the oldest entries, so that is the case when ``last_id``
    is older than the first retained entry and something was ever removed;
    and when ``last_id`` is newer than anything the stream ever generated
    (Redis lost its data), the client's picture cannot be repaired by replay.
    So too when ``last_id`` is older than the stream's epoch (its first entry
    ever, see app/stream/publish.py): it comes from a stream deleted or replaced since.
    ``info``: the stream's :func:`stream_info`, when the caller has it already.
    """
    if info is _READ:
        info = stream_info(client, shard)
    if info is None:  # no such key: nothing was ever published
        return id_key(last_id) > (0, 0)
    if id_key(last_id) > id_key(info["last-generated-id"]):
        return True
    epoch = info["epoch"]
    if epoch and (0, 0) < id_key(last_id) < id_key(epoch):
        return True
    first = info.get("first-entry")
    if not first:
        return info["entries-added"] > 0 and id_key(last_id) < id_key(info["last-generated-id"])
    return info["entries-added"] > info["length"] and id_key(last_id) < id_key(first[0])
