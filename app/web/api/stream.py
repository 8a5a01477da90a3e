"""``GET /api/stream``: the caller's feed as Server-Sent Events, for any HTTP client.

    curl -N -H "Authorization: Bearer $TOKEN" http://127.0.0.1:5000/api/stream

Each notification is one event, ``id:`` its id and ``data:`` its envelope
JSON. ``Last-Event-ID`` (what ``EventSource`` sends when it reconnects) or
``?last_id=`` resumes as Socket.IO replay does: everything the caller may see
after it that history still holds, then live, with no gap and no duplicate
across the seam (the seam holds the stream while history is read, as for a
Socket.IO connection). Past history, a ``reset`` event. After the replay, a
``replayed`` event ``{"recovered", "count", "last_id"}``. Comment lines
(``: heartbeat``) every SSE_HEARTBEAT seconds keep proxies from closing a
quiet stream.

A stream opened with a host-app token (or a stream token made from one) ends
with an ``expired`` event when that token expires.

Credentials: ``Authorization: Bearer`` (Herald's token or the host app's JWT),
or for ``EventSource``, which cannot send headers, ``?token=`` with a stream
token from ``POST /api/stream-token`` (short-lived, good for nothing else;
app/web/auth/stream_tokens.py).
"""
import functools
import logging
import queue
import random
import time

import orjson
from flask import Response, current_app, jsonify, request

from app.realtime import replay
from app.realtime.per_address import RETRY_TOO_MANY, TooMany
from app.realtime.storm import BUSY, Busy
from app.realtime.streams import END, Stream, notification
from app.realtime.wire.admission import opened as handshake_opened
from app.realtime.wire.events import DirectEvents
from app.redis_client import UNAVAILABLE
from app.stream.envelope import EnvelopeError, check_cursor, id_key, restrict
from app.users import accounts, subscriptions
from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp
from app.web.auth import stream_tokens, tokens
from app.web.auth.guards import Unauthorized, identify

log = logging.getLogger(__name__)
EXPIRED = ("the token this stream was opened with has expired; open it again with a "
           "fresh one (with Last-Event-ID, nothing is missed)")


def event(name, payload):
    """One named event, its data the payload's JSON."""
    return b"event: " + name + b"\ndata: " + orjson.dumps(payload) + b"\n\n"


def _caller():
    """Who is asking: a stream token in the query string, else the usual credentials."""
    token = request.args.get("token")
    if token is None:
        return identify()
    if request.headers.get("Authorization"):
        raise Unauthorized("give a stream token or an Authorization header, not both")
    try:
        return stream_tokens.verify(extensions.redis(), current_app.config["SECRET_KEY"], token,
                                    current_app.config["STREAM_TOKEN_TTL"])
    except tokens.TokenError as exc:
        raise Unauthorized(str(exc)) from None


@bp.post("/api/stream-token")
@access.users()
def stream_token(who):
    """A stream token for the caller: ``{"token", "expires_in"}``."""
    key = None
    if who.kind != "jwt":
        user = accounts.get_user(extensions.redis(), who.name)
        key = user["token_key"]
    token = stream_tokens.issue(current_app.config["SECRET_KEY"], who, key)
    return jsonify(token=token, expires_in=stream_tokens.lifetime(
        who, current_app.config["STREAM_TOKEN_TTL"]))


@bp.get("/api/stream")
def stream():
    who = _caller()
    if who.kind == "apikey":
        return jsonify(error="an API key publishes; read with a user's token"), 403
    last_id = request.headers.get("Last-Event-ID") or request.args.get("last_id")
    try:
        if last_id is not None:
            last_id = check_cursor(last_id.strip(), "last_id")
    except EnvelopeError as exc:
        return jsonify(error=str(exc), field=exc.field), 400
    admission = extensions.herald().admission
    try:
        admission.admit(last_id is not None)  # bounded connects and replays (realtime/storm.py)
    except Busy as busy:
        return _busy(busy)
    address = request.remote_addr or ""
    try:  # one session of this address's (realtime/per_address.py) until the stream closes
        admission.sessions.enter(address)
    except TooMany as exc:
        return jsonify(error=str(exc)), 429, {"Retry-After": str(RETRY_TOO_MANY)}
    left = []

    def leave():
        """Once: when the stream ends (with its place in the hub), or its response closes."""
        if not left:
            left.append(True)
            admission.sessions.leave(address)
    try:
        response = _open(who, last_id, admission, leave)
    except BaseException:
        leave()
        raise
    response.call_on_close(leave)
    return response


def _open(who, last_id, admission, leave=lambda: None):
    """The event stream's response, its place in the hub or the seam taken."""
    client = extensions.redis()
    seam = extensions.herald().seam
    hub = extensions.herald().streams
    topics = restrict(subscriptions.list_topics(client, who.name), who.topics)
    try:
        turn = admission.replay_turn() if last_id is not None else None
    except Busy as busy:
        return _busy(busy)
    heartbeat = current_app.config["SSE_HEARTBEAT"]
    direct = DirectEvents.of(request.environ)  # the fan-out loop writes to it when idle
    opened = Stream(hub.new_key(), who.name, topics, who.topics, hub.max_queue, direct,
                    who.expires)
    # From here, what the relay delivers for this stream is kept: held while
    # history is read, queued once live.
    position = None
    if last_id is None:
        hub.open(opened)
        position = seam.follower.position
    else:
        seam.hold(opened.key, who.name, topics, who.topics)
    handshake_opened(request.environ)  # it is open
    pause = functools.partial(extensions.herald().sio.sleep, 0)
    body = _events(client, seam, hub, opened, last_id, position, heartbeat, turn, pause,
                   who.expires, leave)
    if direct is not None:
        # A client that goes away ends its stream at once, not at the next write.
        direct.watch(lambda: hub.end(opened, "the client closed the connection"))
        body = _beside(body, direct)
    response = Response(body, mimetype="text/event-stream",
                        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
    if direct is not None:
        response.call_on_close(direct.unwatch)  # also when the body was never started
    return response


def _busy(busy):
    """Refused for now (a reconnect storm, app/realtime/storm.py): a stream that says
    so in a ``busy`` event and ends. Not a 503, after which EventSource would never
    reconnect: its ``retry`` is ``retry_after`` plus up to a second at random
    (EventSource adds no jitter of its own), then it comes back with Last-Event-ID."""
    wait = int(busy.retry_after * 1000 + random.random() * 1000)
    body = (b"retry: %d\n\n" % wait
            + event(b"busy", {"message": BUSY, "retry_after": busy.retry_after}))
    return Response(body, mimetype="text/event-stream",
                    headers={"Cache-Control": "no-store", "Retry-After": str(int(busy.retry_after + 1))})


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


def _events(client, seam, hub, opened, last_id, position, heartbeat, turn=None,
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
                yield from _replay(client, seam, hub, opened, last_id, pause)
            if turn is not None:
                turn.done()  # the next replay's go (the stream itself goes on)
            if not ready:
                return  # waited too long for its turn: the client comes back with Last-Event-ID
        while True:
            left = heartbeat if expires is None else expires - time.time()
            if left <= 0:
                yield event(b"expired", {"message": EXPIRED})
                log.info("stream of %r ended: its token expired", opened.user)
                return
            # Idle: the fan-out loop writes to this stream itself (streams.py)
            # until something is queued, which wakes this greenlet.
            opened.idle = not opened.queue.qsize()
            try:
                item = opened.queue.get(timeout=min(heartbeat, left))
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
                    chunk.append(notification(*item))
                try:
                    item = opened.queue.get_nowait()
                except queue.Empty:
                    break
            if chunk:
                yield b"".join(chunk)
            if item is END:
                log.info("stream of %r ended: %s", opened.user, opened.ended)
                return
    except UNAVAILABLE:
        log.warning("stream of %r ended: Redis is unreachable", opened.user)
    finally:
        if turn is not None:
            turn.done()
        seam.forget_hold(key)
        seam.forget(key)
        hub.close(key)
        leave()


def _replay(client, seam, hub, opened, last_id, pause=lambda: None):
    """What the stream missed since ``last_id`` (realtime/replay.py), as events; then
    it is live, in the hub. ``pause()`` after each step lets other greenlets run."""
    def go_live(topics):
        opened.topics = list(topics)
        hub.open(opened)

    for name, payload in replay.steps(client, seam, opened.key, opened.user, opened.topics,
                                      last_id, go_live, gone=lambda: opened.ended is not None):
        if name == "notifications":  # their JSON as the relay delivered it
            yield b"".join(notification(entry_id, text) for entry_id, text in payload)
        else:
            yield event(name.encode(), payload)
        pause()
