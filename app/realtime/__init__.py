"""Socket.IO for Herald: how a notification gets from Redis to a browser.

    app/stream/publish.py            publish: Redis stream + live channel, one Lua script
    relay.py              ONE Redis subscription per process -> rooms
    rooms.py              which connections want a notification
    fanout.py             the frame, built once, to every connection in the rooms
    server.py             HeraldServer: Socket.IO policy (fan-out, shedding slow
                          clients, refusing bad packets)
    namespace.py          NotificationsNamespace: connect, replay, subscriptions, read
    replay.py             one replay (held, read, released), for sockets and streams
    manager.py            python-socketio's client manager, each client's rooms indexed
    storm.py              a reconnect storm: connects a second and replays at once
                          bounded; past them "unavailable: busy, retry later"
    streams.py            Server-Sent Events streams, fed by the same relay
                          (the endpoint: app/web/api/stream.py)
    app/realtime/presence.py       who is online: each process's connections per user, in
                          Redis; join/leave as ``presence`` events to watchers
    transport/            the websocket transport (Engine.IO and gevent-websocket
                          internals, in one place; see docs/realtime.md)
    static/js/herald.js   the browser's end

python-socketio 5 replaces gevent-socketio (Python 2 only). Under gevent
(monkey-patched, as in ``wsgi.py``) it runs in gevent mode with
gevent-websocket; elsewhere (CLI, Flask test client) in threading mode, where
it is built but not served.
"""
import socketio

from app.ops.metrics import process_label
from app.realtime.presence import Presence
from app.realtime.wire import fastjson
from app.realtime import wire
from app.realtime.namespace import NotificationsNamespace
from app.realtime.budgets import ReadCoalescer
from app.realtime.relay import Relay
from app.realtime.wire.manager import IndexedManager
from app.realtime.server import HeraldServer
from app.realtime.storm import Admission
from app.realtime.streams import StreamHub


def _async_mode():
    try:
        from gevent import monkey
    except ImportError:
        return "threading"
    return "gevent" if monkey.is_module_patched("socket") else "threading"


def origin_check(listed):
    """Engine.IO's ``cors_allowed_origins`` (a callable it offers for this): a
    browser may connect from Herald's own origin, always, and from the origins
    ``listed`` (SOCKETIO_ORIGINS: the host apps' pages).

    Herald's own origin is the request's scheme and host as the WSGI environ
    has them, that is after ProxyFix when TRUSTED_PROXIES says to believe the
    proxy's X-Forwarded-* headers (and never from those headers otherwise).
    """
    allowed = frozenset(listed)

    def allowed_origin(origin, environ):
        own = f"{environ.get('wsgi.url_scheme', 'http')}://{environ.get('HTTP_HOST', '')}"
        return origin == own or origin in allowed
    return allowed_origin


def init_app(app):
    """Mount the Socket.IO server in front of ``app`` and prepare the relay (not started)."""
    config = app.config
    mode = _async_mode()
    if mode == "gevent":
        wire.check_versions()  # refuse to serve on libraries it was not written for
    sio = HeraldServer(
        max_queue=config["SLOW_CLIENT_MAX_QUEUE"],
        message_rate=config["CLIENT_MESSAGE_RATE"],
        message_burst=config["CLIENT_MESSAGE_BURST"],
        join_timeout=config["JOIN_TIMEOUT"],
        async_mode=mode,
        json=fastjson,
        cors_allowed_origins=origin_check(config["SOCKETIO_ORIGINS"]),
        max_http_buffer_size=100_000,
        client_manager=IndexedManager(),  # a disconnect costs its own rooms, not everyone's
    )
    # Who is online: this process's connections and streams, counted per user.
    presence = app.extensions["herald.presence"] = Presence(app.extensions["herald.redis"],
                                                            process_label())
    namespace = NotificationsNamespace(
        app.extensions["herald.redis"], app.extensions["herald.tokens"],
        config["MAX_SUBSCRIPTIONS"], presence)
    namespace.reads = ReadCoalescer(app.extensions["herald.redis"], sio.start_background_task,
                                    sio.eio.create_event)
    # Bounds for a reconnect storm: connects a second, replays at once (storm.py).
    namespace.admission = app.extensions["herald.admission"] = Admission(
        config["ADMIT_RATE"], config["ADMIT_BURST"], config["REPLAY_CONCURRENCY"],
        config["REPLAY_QUEUE"], sio.eio.create_event)
    sio.register_namespace(namespace)
    app.extensions["herald.sio"] = sio
    relay = Relay(sio, namespace, config["REDIS_URL"], app.extensions["herald.redis"])
    namespace.relay = relay
    app.extensions["herald.relay"] = relay
    relay.streams = app.extensions["herald.streams"] = StreamHub(config["SLOW_CLIENT_MAX_QUEUE"])
    relay.streams.presence = presence
    app.wsgi_app = socketio.WSGIApp(sio, app.wsgi_app)
