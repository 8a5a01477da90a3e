"""A reference for a reconnect: python-socketio itself, doing the least a replay can.

python-socketio's own server (``async_mode="gevent"``, on gevent's pywsgi with
gevent-websocket, as Herald runs it, with every floor's handler: Nagle off, a small
answer in one send, one_send.py) whose ``/notifications`` connect handler
takes the client's ``auth`` and answers every connect, with no token check, no
Redis and no rooms, with the page of notifications given in ``PAGE`` (a JSON list,
the page Herald replayed in the same bench run) and ``replayed`` (``REPLAYED``,
Herald's own payload for that replay): the same messages the client reads from
Herald. ``always_connect`` sends the connect's answer first, as Herald does.
With ``REDIS_URL``, each connect first makes one Redis round trip through
redis-py, with Herald's own client (app/redis_client.py: its pool, its
connections' check for stray data), a pipeline of three reads as Herald's
connect makes (a user's record, a set of subscriptions, a stream's last entry):
the least a reconnect that checks anything in Redis pays.

What it measures (bench/reconnect.py): the cost of a reconnect that is python-
socketio's, gevent's (and redis-py's) alone, beside the bare handshake
(minimal_relay.py). A goal for Herald's reconnect below this reference is a goal
below the libraries Herald is built on.

    PAGE='[...]' REPLAYED='{...}' [REDIS_URL=redis://...] PORT=5103 python bench/peers/plain_socketio.py

Prints ``listening`` on stdout once it accepts connections.
"""
from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import os  # noqa: E402

import socketio  # noqa: E402
from gevent import pywsgi  # noqa: E402
from geventwebsocket.handler import WebSocketHandler  # noqa: E402
from one_send import OneSend  # noqa: E402 (first: it puts the project on sys.path)

from app import redis_client  # noqa: E402

NS = "/notifications"
PAGE = json.loads(os.environ["PAGE"])
REPLAYED = json.loads(os.environ["REPLAYED"])
REDIS = redis_client.connect(os.environ["REDIS_URL"]) if os.environ.get("REDIS_URL") else None

sio = socketio.Server(async_mode="gevent", always_connect=True)


class Handler(OneSend, WebSocketHandler):
    """gevent-websocket's, Nagle off and a small answer in one send, as Herald's."""


@sio.on("connect", namespace=NS)
def connect(sid, _environ, auth):
    if not isinstance(auth, dict) or "token" not in auth:
        return False
    if REDIS is not None:
        with REDIS.pipeline(transaction=False) as pipe:
            pipe.hmget("plain:user", "key", "admin", "topics")
            pipe.smembers("plain:subscriptions")
            pipe.xrevrange("plain:stream", count=1)
            pipe.execute()
    sio.emit("notifications", PAGE, to=sid, namespace=NS)
    sio.emit("replayed", REPLAYED, to=sid, namespace=NS)
    return True


if __name__ == "__main__":
    server = pywsgi.WSGIServer(("127.0.0.1", int(os.environ["PORT"])), socketio.WSGIApp(sio),
                               handler_class=Handler, log=None)
    server.start()
    print("listening", flush=True)
    server.serve_forever()
