"""The long-lived objects of a web process, built in one place, each given its
collaborators when it is made; nothing is filled in afterwards.

Read top-down it is the wiring diagram of the real-time path::

    Redis ─┬─ Bus (publish)       TokenVerifier (Herald tokens, host-app JWTs), KnownKeys (API keys)
           ├─ Presence (who is online)
           └─ LiveFollower (herald:live)
                 ├─ ReplaySeam ─┬─ NotificationsNamespace ─┐
                 │              └─ StreamHub (SSE)         ├─ Relay ── HeraldServer
                 └─────────────────────────────────────────┘

:func:`build` makes them from the app's config; :func:`background_loops` lists
what a serving process runs beside them (``wsgi.serve`` starts each). Flask
views reach them through ``app.extensions`` (``herald.<name>``), set once by
:func:`install`.
"""
import logging
from typing import NamedTuple

import socketio

from app.ops.metrics import keep_snapshots, process_label
from app.realtime.batched_reads import BatchedReads
from app.realtime.budgets import ReadCoalescer
from app.realtime.namespace import NotificationsNamespace
from app.realtime.origins import origin_check
from app.realtime.presence import Presence
from app.realtime.recent import MAX_ENTRIES, Recent
from app.realtime.relay import Relay
from app.realtime.seam import ReplaySeam
from app.realtime.server import HeraldServer
from app.realtime.storm import Admission
from app.realtime.streams import StreamHub
from app.realtime.wire import check_versions, fastjson
from app.realtime.wire.manager import IndexedManager
from app.redis_client import connect
from app.stream.follow import LiveFollower
from app.stream.publish import Bus
from app.users import archive_and_snooze
from app.web.auth.api_keys import KnownKeys
from app.web.auth.bearer import TokenVerifier
from app.web.auth.host_tokens import ConfigError, HostTokens

log = logging.getLogger("herald.services")


class Services(NamedTuple):
    """What one web process holds for its whole life."""

    redis: object        # redis.Redis, with Herald's timeouts (app/redis_client.py)
    bus: Bus
    tokens: TokenVerifier
    api_keys: KnownKeys  # the API keys seen valid (app/web/auth/api_keys.py)
    presence: Presence
    sio: HeraldServer
    admission: Admission
    follower: LiveFollower
    seam: ReplaySeam
    streams: StreamHub
    namespace: NotificationsNamespace
    relay: Relay


def async_mode():
    """``gevent`` when the process is monkey-patched (``wsgi.py``), else ``threading``
    (the CLI, the Flask test client: built but not served)."""
    try:
        from gevent import monkey
    except ImportError:
        return "threading"
    return "gevent" if monkey.is_module_patched("socket") else "threading"


def host_tokens(config):
    """The host app's JWT settings, checked: a bad one ends the process naming it.
    Accepting JWTs without checking their audience and issuer is allowed, with a
    warning: a token another service's key signed for itself would pass here."""
    try:
        host = HostTokens(config["JWT_SECRET"], config["JWT_PUBLIC_KEY"], config["JWT_AUDIENCE"],
                          config["JWT_ISSUER"], config["JWT_LEEWAY"], config["JWT_MAX_TTL"])
    except ConfigError as exc:
        raise SystemExit(f"herald: {exc}") from None
    unset = [name for name in ("JWT_AUDIENCE", "JWT_ISSUER") if not config[name]]
    if host.enabled and unset:
        log.warning("host-app tokens are accepted without checking %s: set %s so that "
                    "a token minted for another service with the same key is refused",
                    " or ".join(unset), " and ".join(unset))
    return host


def build(config):
    """Every long-lived object of a web process, from ``config`` (the app's config)."""
    client = connect(config["REDIS_URL"])
    mode = async_mode()
    if mode == "gevent":
        check_versions()  # refuse to serve on libraries the transport was not written for
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
    tokens = TokenVerifier(client, config["SECRET_KEY"], config["TOKEN_TTL"], host_tokens(config))
    presence = Presence(client, process_label())
    # Bounds for a reconnect storm: connects a second, replays at once (storm.py).
    admission = Admission(config["ADMIT_RATE"], config["ADMIT_BURST"], config["REPLAY_CONCURRENCY"],
                          config["REPLAY_QUEUE"], sio.eio.create_event,
                          sessions_per_address=config["MAX_SESSIONS_PER_ADDRESS"])
    follower = LiveFollower(client, config["REDIS_URL"], name="relay")
    seam = ReplaySeam(follower, Recent(min(MAX_ENTRIES, config["HISTORY_MAX"])))
    streams = StreamHub(config["SLOW_CLIENT_MAX_QUEUE"], presence)
    # A connect's reads (its user, its subscriptions) go to Redis with those of every
    # connect at the same moment, in one pipeline (batched_reads.py).
    connect_reads = BatchedReads(client, sio.start_background_task, sio.eio.create_event)
    namespace = NotificationsNamespace(
        client, tokens.reading_through(connect_reads), config["MAX_SUBSCRIPTIONS"], presence,
        seam, reads=ReadCoalescer(client, sio.start_background_task, sio.eio.create_event),
        admission=admission, connect_reads=connect_reads)
    sio.register_namespace(namespace)
    relay = Relay(sio, follower, seam, namespace, streams)
    return Services(redis=client, bus=Bus(client, config["HISTORY_MAX"]), tokens=tokens,
                    api_keys=KnownKeys(), presence=presence, sio=sio, admission=admission,
                    follower=follower, seam=seam, streams=streams, namespace=namespace, relay=relay)


def install(app, services):
    """Make ``services`` the app's: ``app.extensions["herald.services"]``, and each one
    as ``app.extensions["herald.<name>"]`` for the views."""
    app.extensions["herald.services"] = services
    for name, value in services._asdict().items():
        app.extensions[f"herald.{name}"] = value


def mount_socketio(app, services):
    """Serve Socket.IO (``/socket.io/``) in front of the Flask app."""
    app.wsgi_app = socketio.WSGIApp(services.sio, app.wsgi_app)


def background_loops(app, services):
    """``[(name, function, args)]``: what a serving process runs beside the relay,
    each while ``relay.running`` (they end with it)."""
    relay = services.relay

    def running():
        return relay.running

    return [
        # This process's figures, for /metrics and the Operations page.
        ("metrics snapshots", keep_snapshots, (app, running)),
        # Snoozed notifications come back when due, even across restarts (their
        # times are in Redis; every web process looks, one wakes each).
        ("snooze waker", archive_and_snooze.keep_waking, (services.redis, running)),
        # Who is online, in every process's view (app/realtime/presence.py).
        ("presence", services.presence.keep, (running,)),
    ]
