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

This module is the HTTP around a stream: who asks, from which cursor, and the
response. The stream itself, its lifecycle shared with Socket.IO's
connections, is app/realtime/sse_stream.py.
"""
import functools

from flask import Response, current_app, jsonify, request

from app.realtime import sse_stream
from app.realtime.per_address import RETRY_TOO_MANY, TooMany
from app.realtime.storm import Busy
from app.stream.envelope import EnvelopeError, check_cursor
from app.users import accounts
from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp
from app.web.auth import stream_tokens, tokens
from app.web.auth.guards import Unauthorized, identify

HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


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
    herald = extensions.herald()
    try:
        opened = sse_stream.open_stream(
            herald.lifecycle, herald.streams, herald.redis, who, last_id, request.environ,
            current_app.config["SSE_HEARTBEAT"], functools.partial(herald.sio.sleep, 0))
    except Busy as busy:  # a reconnect storm (app/realtime/storm.py): back later
        return Response(sse_stream.busy(busy), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-store",
                                 "Retry-After": str(int(busy.retry_after + 1))})
    except TooMany as exc:  # this address's sessions (app/realtime/per_address.py)
        return jsonify(error=str(exc)), 429, {"Retry-After": str(RETRY_TOO_MANY)}
    response = Response(opened.body, mimetype="text/event-stream", headers=HEADERS)
    response.call_on_close(opened.close)
    return response
