"""The long-lived objects of a web process, built in one place, each given its
collaborators when it is made; nothing is filled in afterwards (the HTTP
server, made by whoever serves the app, tells the app it serves through each
request's environ: app/realtime/wire/admission.py).

Read top-down it is the wiring diagram of the real-time path::

    Redis ─┬─ Bus (publish)       TokenVerifier (Herald tokens, host-app JWTs), KnownKeys (API keys)
           ├─ Presence (who is online)
           └─ LiveFollower (herald:live)
                 ├─ ReplaySeam ─┬─ NotificationsNamespace ─┐
                 │  (Recent)    └─ StreamHub (SSE)         ├─ Relay ── HeraldServer
                 ├─ RedisWatch ────────────────────────────┤
                 └─────────────────────────────────────────┘

:func:`build` makes them from the app's config; :func:`background_loops` lists
what a serving process runs beside them (``wsgi.serve`` starts each). Code
with an app reaches them through :func:`of` (``of(app).relay``), views through
``app.web.extensions.herald()``: one typed accessor, set once by :func:`install`.
docs/architecture.md draws the whole.
"""
import functools
import logging
from collections.abc import Callable
from typing import NamedTuple

import redis
import socketio
from flask_limiter import Limiter

from app.key_layout import connect
from app.ops.metrics import HeraldCollector, register
from app.ops.web_figures import Figures, keep_snapshots, process_label
from app.realtime.batched_reads import BatchedReads
from app.realtime.lanes import Followers, ShardedSeam
from app.realtime.lanes import build as build_lanes
from app.realtime.lifecycle import Lifecycle
from app.realtime.namespace import NotificationsNamespace
from app.realtime.origins import origin_check
from app.realtime.presence import Presence
from app.realtime.read_marks import ReadMarks
from app.realtime.recent import MAX_ENTRIES, Recent
from app.realtime.redis_watch import RedisWatch
from app.realtime.relay import Relay
from app.realtime.seam import ReplaySeam
from app.realtime.server import HeraldServer
from app.realtime.sse_hub import StreamHub
from app.realtime.storm import ConnectBounds
from app.realtime.wire import check_versions, fastjson
from app.realtime.wire.manager import IndexedManager
from app.spark.launcher import Runs
from app.stream.follow import LiveFollower
from app.stream.publish import Bus, durability
from app.stream.shards import configured as configured_shards
from app.stream.topics import TopicCounts
from app.users import archive_and_snooze
from app.web.auth.api_keys import KnownKeys
from app.web.auth.bearer import TokenVerifier
from app.web.auth.host_tokens import ConfigError, HostTokens
from app.web.rate_limits import limiter
from app.web.security import allowed_hosts, upgrade_refusal

log = logging.getLogger("herald.services")

PAGE_REDIS_TIMEOUT = 1.5  # seconds a page waits on Redis, to connect or for an answer
PAGE_REDIS_CONNECTIONS = 20


class Services(NamedTuple):
    """What one web process holds for its whole life."""

    redis: redis.Redis   # with Herald's timeouts (app/redis_client.py)
    bus: Bus
    tokens: TokenVerifier
    api_keys: KnownKeys  # the API keys seen valid (app/web/auth/api_keys.py)
    presence: Presence
    sio: HeraldServer
    bounds: ConnectBounds  # connects a second, replays at once, sessions per address
    lifecycle: Lifecycle   # every real-time connection's steps (Socket.IO's and SSE's)
    follower: LiveFollower
    seam: ReplaySeam
    streams: StreamHub
    namespace: NotificationsNamespace
    relay: Relay
    redis_watch: RedisWatch  # whether this process reaches Redis, told to the browsers
    page_redis: redis.Redis  # the pages' own client: short timeouts, a small pool
    upgrade_refusal: Callable  # gevent-websocket's pre_start_hook (app/web/security.py)
    metrics: Figures     # this process's own figures and /metrics registry (app/ops/web_figures.py)
    spark_runs: Runs     # the Spark jobs this process started (app/spark/launcher.py)
    topic_counts: TopicCounts  # the topics' counts /api/topics answers, cached a while
    limiter: Limiter     # Flask-Limiter's, counting in Redis (app/web/rate_limits.py)


def of(app):
    """The Services of ``app`` (a Flask app create_app built)."""
    return app.extensions["herald"]


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
        allowed_hosts=allowed_hosts(config),  # Host names Socket.IO's requests may name
        max_http_buffer_size=100_000,
        client_manager=IndexedManager(),  # a disconnect costs its own rooms, not everyone's
    )
    tokens = TokenVerifier(client, config["SECRET_KEY"], config["TOKEN_TTL"], host_tokens(config))
    presence = Presence(client, process_label())
    # Bounds for a reconnect storm: connects a second, replays at once (storm.py).
    bounds = ConnectBounds(config["ADMIT_RATE"], config["ADMIT_BURST"],
                           config["REPLAY_CONCURRENCY"], config["REPLAY_QUEUE"],
                           sio.eio.create_event,
                           sessions_per_address=config["MAX_SESSIONS_PER_ADDRESS"])
    follower, seam, lanes = _following(client, config)
    watch = RedisWatch(sio, follower)
    streams = StreamHub(config["SLOW_CLIENT_MAX_QUEUE"], presence)
    # A connect's reads (its user, its subscriptions) go to Redis with those of every
    # connect at the same moment, in one pipeline (batched_reads.py).
    connect_reads = BatchedReads(client, sio.start_background_task, sio.eio.create_event)
    lifecycle = Lifecycle(bounds, seam, connect_reads)
    namespace = NotificationsNamespace(
        client, tokens.reading_through(connect_reads), config["MAX_SUBSCRIPTIONS"], presence,
        seam, marks=ReadMarks(client, sio.start_background_task, sio.eio.create_event),
        lifecycle=lifecycle, connect_reads=connect_reads, redis_watch=watch)
    sio.register_namespace(namespace)
    relay = Relay(sio, follower, seam, namespace, streams, watch, lanes)
    # The pages' reads: their own small pool with short timeouts, so that a slow
    # Redis shows a page's error at once, not a request held (app/web/pages/routes.py).
    page_redis = connect(config["REDIS_URL"], socket_timeout=PAGE_REDIS_TIMEOUT,
                         socket_connect_timeout=PAGE_REDIS_TIMEOUT,
                         max_connections=PAGE_REDIS_CONNECTIONS)
    built = Services(redis=client, bus=Bus(client, config["HISTORY_MAX"], durability(config)), tokens=tokens,
                     api_keys=KnownKeys(), presence=presence, sio=sio, bounds=bounds,
                     lifecycle=lifecycle,
                     follower=follower, seam=seam, streams=streams, namespace=namespace,
                     relay=relay, redis_watch=watch, page_redis=page_redis,
                     upgrade_refusal=upgrade_refusal(config, sio.eio), metrics=Figures(),
                     spark_runs=Runs(), topic_counts=TopicCounts(), limiter=limiter(config))
    register(built, HeraldCollector(built))  # this process's figures, and every process's
    return built


def live_follower(client, redis_url, recent, shard=None):
    """The relay's follower of herald:live (of ``shard``'s channel, with a sharded
    history). Where it starts, ``recent`` (the window replays read) is filled back from
    the stream up to that position (one read), so that it is complete from there on."""
    name = "relay" if shard is None or not shard.sharded else f"relay.{shard.index}"
    return LiveFollower(client, redis_url, name=name, shard=shard,
                        on_start=functools.partial(recent.backfill, client))


def _following(client, config):
    """``(follower, seam, lanes)`` of the relay: one follower, window and seam (lanes
    None); or with a sharded history (STREAM_SHARDS > 1), a lane of the three per shard
    and herald:control followed on its own (app/realtime/lanes.py)."""
    shards, entries = configured_shards(), min(MAX_ENTRIES, config["HISTORY_MAX"])
    if shards.count == 1:
        recent = Recent(entries)
        follower = live_follower(client, config["REDIS_URL"], recent)
        return follower, ReplaySeam(follower, recent), None
    lanes = build_lanes(shards, entries, lambda shard, recent: live_follower(
        client, config["REDIS_URL"], recent, shard))
    followers = Followers(shards, lanes, LiveFollower(client, config["REDIS_URL"], name="control",
                                                      control_only=True))
    return followers, ShardedSeam(shards, lanes, followers), lanes


def install(app, services):
    """Make ``services`` the app's (:func:`of`)."""
    app.extensions["herald"] = services


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
        ("metrics snapshots", keep_snapshots, (services, running)),
        # Snoozed notifications come back when due, even across restarts (their
        # times are in Redis; every web process looks, one wakes each).
        ("snooze waker", archive_and_snooze.keep_waking, (services.redis, running)),
        # Who is online, in every process's view (app/realtime/presence.py).
        ("presence", services.presence.keep, (running,)),
    ]
