"""The floor for publish-to-browser and for a websocket handshake: a minimal relay.

The same stack Herald runs (gevent's pywsgi and gevent-websocket), and nothing
else: no Flask, no python-socketio, no auth, no rooms. What a relay cannot do
without:

- ``POST /publish`` (a JSON object) stores it and publishes it in one Redis
  round trip (a Lua script: XADD to a capped stream, PUBLISH the id and the
  body), and answers 201 ``{"id": ID}``;
- one greenlet follows the Redis channel and sends each message as ONE
  websocket text frame, ``{"id": ID, ...the body}``, built once, to every
  connected browser;
- ``GET /`` is a page whose inline script opens a plain ``WebSocket`` on
  ``/feed`` and appends ``<li data-id=ID>`` to ``<ul id="feed">`` for each
  frame (so bench/common.py's OBSERVER times it as it times Herald's feed);
  ``window.relayReady`` is true once the server has this socket in its set;
- ``/socket.io/`` is a bare handshake: the upgrade answered 101, an Engine.IO
  open packet ``0{...}`` sent, then the socket read until the client closes
  (the floor of a reconnect, bench/reconnect.py).

    REDIS_URL=redis://127.0.0.1:6379 PORT=5102 python bench/peers/minimal_relay.py

Prints ``listening`` on stdout once it accepts connections.
"""
from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import os  # noqa: E402
import uuid  # noqa: E402

import gevent  # noqa: E402
import redis  # noqa: E402
from gevent import pywsgi  # noqa: E402
from geventwebsocket.handler import WebSocketHandler  # noqa: E402
from one_send import OneSend  # noqa: E402

CHANNEL = "minimal:live"
STREAM = "minimal:stream"
# Store and publish at once, as Herald's publish script does (its checks aside).
PUBLISH = """
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', 10000, '*', 'body', ARGV[1])
redis.call('PUBLISH', KEYS[2], id .. ' ' .. ARGV[1])
return id
"""
PAGE = b"""<!doctype html><meta charset="utf-8"><title>minimal relay</title>
<ul id="feed"></ul>
<script>
window.relayReady = false;
var feed = document.getElementById('feed');
var socket = new WebSocket('ws://' + location.host + '/feed');
socket.onmessage = function (event) {
  var message = JSON.parse(event.data);
  if (message.hello) { window.relayReady = true; return; }
  var item = document.createElement('li');
  item.setAttribute('data-id', message.id);
  item.textContent = message.title || message.id;
  feed.insertBefore(item, feed.firstChild);
};
</script>
"""
OPEN_PACKET = '0{"sid":"%s","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}'

client = redis.Redis.from_url(os.environ["REDIS_URL"])
publish_script = client.register_script(PUBLISH)
browsers = set()


class Handler(OneSend, WebSocketHandler):
    """gevent-websocket's, Nagle off and a small answer in one send, as Herald's
    (one_send.py)."""


def relay():
    """Follow the channel; each message goes out as one frame to every browser."""
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(CHANNEL)
    for message in pubsub.listen():
        ident, _, body = message["data"].decode().partition(" ")
        frame = '{"id":' + json.dumps(ident) + ("," + body[1:] if len(body) > 2 else "}")
        for ws in list(browsers):
            try:
                ws.send(frame)
            except Exception:  # noqa: BLE001 - a closed socket leaves the set
                browsers.discard(ws)


def feed(ws):
    browsers.add(ws)
    try:
        ws.send('{"hello":true}')
        while ws.receive() is not None:
            pass
    finally:
        browsers.discard(ws)


def handshake(ws):
    """A bare Engine.IO handshake: the open packet, then wait for the close."""
    ws.send(OPEN_PACKET % uuid.uuid4().hex[:20])
    while ws.receive() is not None:
        pass


def app(environ, start_response):
    path, method = environ.get("PATH_INFO", "/"), environ["REQUEST_METHOD"]
    ws = environ.get("wsgi.websocket")
    if ws is not None:
        (feed if path == "/feed" else handshake)(ws)
        return []
    if method == "POST" and path == "/publish":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length)
        try:
            envelope = json.loads(body)
            assert isinstance(envelope, dict)
        except (ValueError, AssertionError):
            start_response("400 Bad Request", [("Content-Type", "text/plain")])
            return [b"a JSON object, please"]
        ident = publish_script(keys=[STREAM, CHANNEL], args=[json.dumps(envelope)]).decode()
        answer = json.dumps({"id": ident}).encode()
        start_response("201 Created", [("Content-Type", "application/json"),
                                       ("Content-Length", str(len(answer)))])
        return [answer]
    if method == "GET" and path == "/":
        start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                  ("Content-Length", str(len(PAGE)))])
        return [PAGE]
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not found"]


if __name__ == "__main__":
    server = pywsgi.WSGIServer(("127.0.0.1", int(os.environ["PORT"])), app,
                               handler_class=Handler, log=None)
    server.start()
    gevent.spawn(relay)
    print("listening", flush=True)
    server.serve_forever()
