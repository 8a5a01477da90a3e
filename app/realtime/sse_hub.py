"""Server-Sent Events streams of this web process, fed by the relay.

A stream is one open ``GET /api/stream`` (app/web/api/stream.py): its user, the
topic prefixes it follows (the user's subscriptions, within a token's
``topics`` claim) and a bounded queue of notifications. The relay hands each
batch it fans out to Socket.IO to the hub as well, so a stream costs no Redis
subscription of its own; routing uses the same rooms (rooms.py): a stream is
in its user's room and in the room of each prefix it follows.

A stream that is idle (its greenlet waits on an empty queue, nothing is
being written) and has a direct writer (wire/sse_writer.py: served by Herald's
pywsgi handler) is written to by the fan-out loop itself, as an idle
websocket is: what the relay hands on together goes out in one write,
built once for every stream that gets the same notifications, and no
greenlet is woken. A busy stream's notifications wait in its queue.

A stream whose client does not keep up, with ``max_queue`` notifications
waiting, is ended, as Socket.IO sheds a slow client: its client reconnects
with ``Last-Event-ID`` and is replayed what it missed. So is one whose
direct write failed (the peer is gone).

With a sharded history (app/stream/shards.py) an event's ``id`` is not the
notification's id but the stream's cursor after it (one position per shard), as
``Last-Event-ID`` must carry back: each stream keeps its own (``cursor``), and its
events are built for it alone.
"""
import itertools
import queue

import orjson

from app.realtime import rooms
from app.realtime.wire.sse_writer import frame
from app.stream.envelope import id_key, restrict
from app.stream.shards import configured as configured_shards

END = object()  # queued to end a stream


def notification(entry_id, text):
    """One notification as an event: ``id`` its id (what Last-Event-ID carries
    back), ``data`` its JSON (str or bytes)."""
    if isinstance(text, str):
        text = text.encode()
    return b"id: " + entry_id.encode() + b"\ndata: " + text + b"\n\n"


def cursor_event(stream, entry_id, text):
    """:func:`notification` for ``stream``: its id the stream's cursor after it, with a
    sharded history (``stream.cursor`` set), else the notification's own."""
    if stream.cursor is None:
        return notification(entry_id, text)
    shards = configured_shards()
    stream.cursor = shards.advance(stream.cursor, entry_id)
    return notification(shards.format(stream.cursor), text)


def event(name, payload):
    """One named event (``name``: bytes), its data the payload's JSON."""
    return b"event: " + name + b"\ndata: " + orjson.dumps(payload) + b"\n\n"


class Stream:
    """One open event stream; ``queue`` holds ``(id, json text)`` pairs, or END.

    ``direct``: its DirectEvents (or None: written by its greenlet alone);
    ``idle``: its greenlet waits on the empty queue (set by that greenlet);
    ``expires_ms``: nothing published after this (UNIX ms) is written to it;
    ``cursor``: with a sharded history, its positions (app/stream/shards.py) as of the
    last event it was given, else None.
    """

    __slots__ = ("key", "user", "topics", "limit", "queue", "ended", "direct", "idle",
                 "expires_ms", "cursor")

    def __init__(self, key, user, topics, limit, max_queue, direct=None, expires=None):
        self.key = key
        self.user = user
        self.topics = list(topics)
        self.limit = limit
        self.queue = queue.Queue(max_queue + 1)  # the last place is END's
        self.ended = None  # why it was ended, once it was
        self.direct = direct
        self.idle = False
        self.expires_ms = None if expires is None else expires * 1000
        self.cursor = None

    def rooms(self):
        return [rooms.user_room(self.user)] + [rooms.topic_room(t) for t in self.topics]


class StreamHub:
    """The open streams of this process, by room."""

    def __init__(self, max_queue, presence=None):
        self.max_queue = max_queue
        self.streams = {}  # key -> Stream
        self.rooms = {}    # room -> set of keys
        self.keys = itertools.count(1)
        self.delivered = 0
        self.written = 0  # of those, written by the fan-out loop itself (idle streams)
        self.shed = 0
        self.presence = presence  # an app.realtime.presence.Presence: a stream makes its user online

    def __len__(self):
        return len(self.streams)

    def new_key(self):
        """A key for a new stream; unlike any Socket.IO sid (the relay holds both)."""
        return f"sse:{next(self.keys)}"

    def open(self, stream):
        """Start delivering to ``stream`` (no I/O: it joins its rooms in one step)."""
        if stream.key not in self.streams and self.presence is not None:
            self.presence.opened(stream.user)
        self.streams[stream.key] = stream
        for room in stream.rooms():
            self.rooms.setdefault(room, set()).add(stream.key)

    def close(self, key):
        stream = self.streams.pop(key, None)
        if stream is not None:
            self._leave(stream, stream.rooms())
            if self.presence is not None:
                self.presence.closed(stream.user)

    def _leave(self, stream, names):
        for room in names:
            keys = self.rooms.get(room)
            if keys is not None:
                keys.discard(stream.key)
                if not keys:
                    del self.rooms[room]

    def deliver(self, batch):
        """``batch``: ``(rooms, id, text, skip)`` in id order, as the relay fans out:
        to each stream once per notification, written at once to an idle stream
        (one write for all of the batch's that are for it), else queued."""
        rooms_of = self.rooms
        if len(batch) == 1:  # the usual case, without the bookkeeping of many
            names, _id, _text, skip = batch[0]
            keys = set()
            for room in names:
                keys.update(rooms_of.get(room, ()))
            if skip:
                keys -= skip
            if keys:
                self._hand(batch, dict.fromkeys(keys, (0,)))
            return
        wanted = {}  # stream key -> indexes into batch, in order
        for index, (names, _id, _text, skip) in enumerate(batch):
            seen = set()
            for room in names:
                keys = rooms_of.get(room)
                if not keys:
                    continue
                for key in keys:
                    if key in seen or (skip and key in skip):
                        continue
                    seen.add(key)
                    indexes = wanted.get(key)
                    if indexes is None:
                        wanted[key] = [index]
                    else:
                        indexes.append(index)
        self._hand(batch, wanted)

    def _hand(self, batch, wanted):
        """Each stream its ``wanted`` indexes of ``batch``: written now, or queued."""
        frames = {}  # (indexes, chunked) -> bytes, built once for every stream alike
        streams = self.streams
        for key, indexes in wanted.items():  # no I/O before: the rooms did not change
            stream = streams.get(key)
            if stream is None or stream.ended:
                continue
            direct = stream.direct
            if direct is not None and stream.idle and not direct.writer.busy \
                    and not stream.queue.qsize():
                self._write(stream, direct, batch, indexes, frames)
            else:
                for index in indexes:
                    self._put(stream, (batch[index][1], batch[index][2]))

    def _write(self, stream, direct, batch, indexes, frames):
        """Write ``indexes`` of ``batch`` to idle ``stream`` from this loop."""
        if stream.expires_ms is not None:  # its greenlet ends it with ``expired`` soon
            indexes = [i for i in indexes if id_key(batch[i][1])[0] <= stream.expires_ms]
            if not indexes:
                return
        chunked = direct.handler.response_use_chunked
        wanted = (tuple(indexes), chunked)
        data = frames.get(wanted)
        if stream.cursor is not None:  # its own ids: built for it alone
            data = frame(b"".join(cursor_event(stream, batch[i][1], batch[i][2])
                                  for i in indexes), chunked)
        elif data is None:
            data = frames[wanted] = frame(
                b"".join(notification(batch[i][1], batch[i][2]) for i in indexes), chunked)
        writer = direct.writer
        writer.write_now(data)
        if writer.failed:
            self.end(stream, "the connection is gone")
            return
        self.delivered += len(indexes)
        self.written += len(indexes)

    def _put(self, stream, item):
        if stream.ended:
            return
        if stream.queue.qsize() >= self.max_queue:
            self.shed += 1
            self.end(stream, "too slow: it fell more than "
                             f"{self.max_queue} notifications behind")
            return
        stream.queue.put_nowait(item)
        self.delivered += 1

    def end(self, stream, why):
        """End ``stream``: its reader sends what is queued, then closes."""
        if stream.ended:
            return
        stream.ended = why
        self.close(stream.key)
        stream.queue.put_nowait(END)

    def has_user(self, user):
        """True when ``user`` has a stream open here."""
        return any(s.user == user for s in self.streams.values())

    def end_user(self, user, why):
        for stream in [s for s in self.streams.values() if s.user == user]:
            self.end(stream, why)

    def apply_change(self, user, added, removed, full=None):
        """``user``'s subscriptions changed: their streams follow (within their limits)."""
        for stream in [s for s in self.streams.values() if s.user == user]:
            before = stream.rooms()
            if stream.limit is not None and full is not None:
                stream.topics = restrict(full, stream.limit)
            else:
                gone = restrict(removed, stream.limit)
                stream.topics = [t for t in stream.topics if t not in gone]
                stream.topics += [t for t in restrict(added, stream.limit)
                                  if t not in stream.topics]
            self._leave(stream, before)
            self.open(stream)
