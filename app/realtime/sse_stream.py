"""One Server-Sent Events stream, from its opening to its end: the body ``GET /api/stream``
answers with (app/web/api/stream.py is the HTTP around it: credentials, the
cursor, the response).

A stream goes through the lifecycle every real-time connection does
(lifecycle.py): admitted, counted under its address, its topics resolved,
held by the seam and replayed from its cursor (or live at once), then live
in the hub (sse_hub.py), which the relay feeds; when it ends, however it
ends, what it took is given back. Only the way it says things is its own:
a refusal for now is a ``busy`` event with a ``retry`` (not a 503, after
which EventSource never reconnects), the replay's events are SSE events, and
a credential that expires ends it with ``expired``.

The stream's :class:`~.sse_hub.Stream` is changed here only while it is not
in the hub yet (its topics as the replay goes live); once it is there, the
hub changes it and this side reads its queue.
"""
import logging
import queue
import random
import time

from app.realtime.sse_hub import END, Stream, cursor_event, event
from app.realtime.storm import BUSY
from app.realtime.wire.admission import opened as handshake_opened
from app.realtime.wire.pings import on_grain
from app.realtime.wire.sse_writer import DirectEvents
from app.redis_client import UNAVAILABLE
from app.stream.envelope import id_key
from app.stream.shards import configured as configured_shards

log = logging.getLogger(__name__)
EXPIRED = ("the token this stream was opened with has expired; open it again with a "
           "fresh one (with Last-Event-ID, nothing is missed)")


class Opened:
    """An event stream admitted: ``body`` (bytes to write, in order) and ``close()``,
    to call once the response is closed, whether or not its body was started."""

    __slots__ = ("body", "close")

    def __init__(self, body, close):
        self.body = body
        self.close = close


def open_stream(lifecycle, hub, client, who, last_id, environ, heartbeat, pause):
    """Open ``who``'s stream (a credential: app/web/auth), resuming after ``last_id``
    (None: live from now), for the request of ``environ``. :class:`~.storm.Busy` or
    :class:`~.per_address.TooMany` is raised when it is refused at once (nothing is
    left taken), UNAVAILABLE when Redis is; a replay refused for now opens a stream
    that says ``busy`` and ends (:func:`busy`).

    ``heartbeat``: seconds of quiet before a comment line; ``pause()``: lets other
    greenlets run between the replay's steps."""
    address = environ.get("REMOTE_ADDR", "")
    lifecycle.admit(address, last_id is not None)
    left = []

    def leave():
        """Once: when the stream ends (with its place in the hub), or its response closes."""
        if not left:
            left.append(True)
            lifecycle.leave(address)
    try:
        return _open(lifecycle, hub, client, who, last_id, environ, heartbeat, pause, leave)
    except BaseException:
        leave()
        raise


def _open(lifecycle, hub, client, who, last_id, environ, heartbeat, pause, leave):
    topics = lifecycle.topics(who)
    if last_id is not None:
        turn = lifecycle.turn()  # Busy: the caller's busy stream (leave() is its close)
    else:
        turn = None
    direct = DirectEvents.of(environ)  # the fan-out loop writes to it when idle
    opened = Stream(hub.new_key(), who.name, topics, who.topics, hub.max_queue, direct,
                    who.expires)
    # From here, what the relay delivers for this stream is kept: held while
    # history is read, queued once live.
    position = lifecycle.position()  # where it goes live, or is held from (no I/O between)
    if configured_shards().count > 1:
        opened.cursor = configured_shards().parse(position)[0]
    if last_id is None:
        hub.open(opened)
    else:
        lifecycle.hold(opened.key, who.name, topics, who.topics)
    handshake_opened(environ)  # it is open: the server may open the next connection
    body = _events(lifecycle, hub, client, opened, last_id, position, heartbeat, turn, pause,
                   who.expires, leave)
    if direct is None:
        return Opened(body, leave)
    # A client that goes away ends its stream at once, not at the next write.
    direct.watch(lambda: hub.end(opened, "the client closed the connection"))

    def close():
        direct.unwatch()  # also when the body was never started
        leave()
    return Opened(_beside(body, direct), close)


def busy(refused):
    """The body of a stream refused for now (:class:`~.storm.Busy` ``refused``): it says
    so in a ``busy`` event and ends. Its ``retry`` is ``retry_after`` plus up to a
    second at random (EventSource adds no jitter of its own); then the client comes
    back with Last-Event-ID."""
    wait = int(refused.retry_after * 1000 + random.random() * 1000)
    return (b"retry: %d\n\n" % wait
            + event(b"busy", {"message": BUSY, "retry_after": refused.retry_after}))


def _beside(body, direct):
    """``body``'s pieces, each once what the fan-out loop wrote directly is out
    (pywsgi writes what is yielded: the two never interleave), and the end
    (pywsgi's last chunk) likewise."""
    try:
        for piece in body:
            direct.wait()
            yield piece
        direct.wait()
    finally:
        direct.unwatch()
        body.close()


def _events(lifecycle, hub, client, opened, last_id, position, heartbeat, turn=None,
            pause=lambda: None, expires=None, leave=lambda: None):
    """The response body: the replay (or where it went live), then live events.
    A replay waits for its ``turn`` (a bounded number run at once) and calls
    ``pause()`` between steps (other greenlets run: the relay, other replays).
    At ``expires`` (the credential's end, UNIX seconds) an ``expired`` event
    ends the stream, and nothing published after it is sent. ``leave()`` once
    it has left the hub (its address's count of sessions, per_address.py)."""
    key = opened.key
    try:
        yield b"retry: 2000\n\n"
        if last_id is None:
            yield event(b"replayed", {"recovered": True, "count": 0, "last_id": position})
        else:
            ready = turn is None or turn.wait(lambda: False)
            if ready:
                yield from _replay(lifecycle, hub, client, opened, last_id, pause)
            lifecycle.replayed(key, turn)  # the next replay's go (the stream itself goes on)
            turn = None
            if not ready:
                return  # waited too long for its turn: the client comes back with Last-Event-ID
        yield from _live(opened, heartbeat, expires)
    except UNAVAILABLE:
        log.warning("stream of %r ended: Redis is unreachable", opened.user)
    finally:
        lifecycle.replayed(key, turn)
        lifecycle.forget(key)
        hub.close(key)
        leave()


def _live(opened, heartbeat, expires):
    """Live events until the stream ends or its credential expires."""
    while True:
        left = heartbeat if expires is None else expires - time.time()
        if left <= 0:
            yield event(b"expired", {"message": EXPIRED})
            log.info("stream of %r ended: its token expired", opened.user)
            return
        # Idle: the fan-out loop writes to this stream itself (sse_hub.py)
        # until something is queued, which wakes this greenlet.
        opened.idle = not opened.queue.qsize()
        try:
            # On the wheels' grain: idle streams' heartbeats come due together, one
            # wake for them all (not one per stream: N/15 a second), at most 0.25 s late.
            item = opened.queue.get(timeout=on_grain(min(heartbeat, left)))
        except queue.Empty:
            opened.idle = False
            if left >= heartbeat:  # a quiet while, not the expiry
                yield b": heartbeat\n\n"
            continue
        opened.idle = False
        # Whatever else is queued goes out in the same write: a busy stream
        # costs one write per wake-up, not one per notification.
        chunk = []
        while item is not END:
            if expires is None or id_key(item[0])[0] <= expires * 1000:
                chunk.append(cursor_event(opened, *item))
            try:
                item = opened.queue.get_nowait()
            except queue.Empty:
                break
        if chunk:
            yield b"".join(chunk)
        if item is END:
            log.info("stream of %r ended: %s", opened.user, opened.ended)
            return


def _replay(lifecycle, hub, client, opened, last_id, pause=lambda: None):
    """What the stream missed since ``last_id`` (replay.py), as events; then it is live,
    in the hub. ``pause()`` after each step lets other greenlets run."""
    def go_live(topics):
        opened.topics = list(topics)  # not in the hub yet: nothing else changes it
        hub.open(opened)

    if opened.cursor is not None:  # sharded: the ids are cursors from the client's on
        shards = configured_shards()
        positions, exact = shards.parse(last_id)
        if exact:  # else a reset comes first, and the replay goes on from where it was held
            opened.cursor = positions
    for name, payload in lifecycle.replay(client, opened.key, opened.user, opened.topics,
                                          last_id, go_live,
                                          gone=lambda: opened.ended is not None):
        if name == "notifications":  # their JSON as the relay delivered it
            yield b"".join(cursor_event(opened, entry_id, text) for entry_id, text in payload)
        else:
            if name == "replayed" and opened.cursor is not None:
                opened.cursor = shards.parse(payload["last_id"])[0]
            yield event(name.encode(), payload)
        pause()
