"""The declaration of every environment setting: name, kind, default, bounds.

Imports nothing of Herald's, so anything may read it (the README's table is
checked against it).
"""
from typing import Any, NamedTuple

WORKER_ROLES = ("bridge", "archiver", "digest", "webhooks")


class Setting(NamedTuple):
    """One environment setting: ``kind`` is ``text``, ``whole`` (an int from
    ``low`` to ``high``), ``seconds`` (a number from ``low`` to ``high``),
    ``flag`` (1 or 0), ``list`` (comma-separated) or ``choice`` (one of ``choices``)."""

    name: str
    kind: str
    default: Any = None
    low: float | None = None
    high: float | None = None
    choices: tuple = ()


def _declare(*settings):
    return {s.name: s for s in settings}


S = Setting
SETTINGS = _declare(
    # Where things are
    S("HOST", "text", "127.0.0.1"), S("PORT", "whole", 5000, 1, 65535),
    S("WEB_PROCESSES", "whole", 1, 1, 64), S("REUSE_PORT", "flag", False),
    S("REDIS_URL", "text", ""), S("VAR_DIR", "text", ""), S("ARCHIVE_DIR", "text", ""),
    S("ROLLUP_DIR", "text", ""), S("HERALD_URL", "text", ""), S("EXAMPLE_PORT", "whole", 5001, 1, 65535),
    S("CHIRP_PORT", "whole", 5002, 1, 65535), S("ENV_FILE", "text", ""),
    # The web app
    S("SECRET_KEY", "text", ""), S("TOKEN_TTL", "whole", 3600), S("HISTORY_MAX", "whole", 100_000),
    S("STREAM_SHARDS", "whole", 1, 1, 64),
    S("PUBLISH_REPLICAS", "whole", 0, 0, 16), S("PUBLISH_REPLICA_TIMEOUT", "seconds", 0.5, 0.001, 30),
    S("MAX_SUBSCRIPTIONS", "whole", 100), S("SLOW_CLIENT_MAX_QUEUE", "whole", 1000),
    S("CLIENT_MESSAGE_RATE", "whole", 20), S("CLIENT_MESSAGE_BURST", "whole", 100),
    S("JOIN_TIMEOUT", "whole", 10), S("REQUEST_TIMEOUT", "whole", 10),
    S("MAX_CONNECTIONS", "whole", 0), S("MAX_HANDSHAKES", "whole", 256),
    S("MAX_CONNECTIONS_PER_ADDRESS", "whole", None),
    S("MAX_SESSIONS_PER_ADDRESS", "whole", 3000),
    S("ADMIT_RATE", "whole", 0), S("ADMIT_BURST", "whole", 0),
    S("REPLAY_CONCURRENCY", "whole", 32), S("REPLAY_QUEUE", "whole", 10_000),
    S("WEBSOCKET_TIMEOUT", "whole", 60), S("SSE_HEARTBEAT", "whole", 15),
    S("STREAM_TOKEN_TTL", "whole", 120), S("SOCKETIO_ORIGINS", "list", ()),
    S("JWT_SECRET", "text", ""), S("JWT_PUBLIC_KEY", "text", ""), S("JWT_AUDIENCE", "text", ""),
    S("JWT_ISSUER", "text", ""), S("JWT_LEEWAY", "whole", 5),
    S("JWT_MAX_TTL", "whole", 86400, 1, 366 * 86400),
    S("SESSION_COOKIE_SECURE", "flag", None), S("SESSION_LIFETIME", "whole", 12 * 3600),
    S("METRICS_TOKEN", "text", ""), S("TRUSTED_PROXIES", "whole", 0),
    S("ALLOWED_HOSTS", "list", ()),
    S("RATELIMIT_LOGIN", "text", "10 per minute"), S("RATELIMIT_TOKEN", "text", "30 per minute"),
    S("RATELIMIT_SESSION_TOKEN", "text", "60 per minute"),
    S("RATELIMIT_API_KEY", "text", "500 per second"),
    S("READY_REQUIRES", "list", (), choices=WORKER_ROLES),
    S("LOG_FORMAT", "choice", "", choices=("json", "text")), S("ACCESS_LOG", "flag", False),
    # Workers
    S("HEARTBEAT_INTERVAL", "seconds", 5.0, 0.2, 300),
    S("ARCHIVER_LEASE", "seconds", 10.0, 3, 3600), S("SPARK_MASTER", "text", ""),
    S("HERALD_NOTIFY_VIA", "choice", "redis", choices=("redis", "zmq")),
    S("HERALD_ZMQ_ROUTER", "text", ""),
    S("SMTP_URL", "text", ""), S("DIGEST_FROM", "text", ""), S("DIGEST_CONSUMER", "text", ""),
    S("DIGEST_CLAIM_IDLE", "seconds", 30.0, 0.1, 86400),
    S("WEBHOOK_ALLOW", "text", ""), S("WEBHOOK_CONNECT_TIMEOUT", "seconds", 5.0, 0),
    S("WEBHOOK_TIMEOUT", "seconds", 10.0, 0), S("WEBHOOK_BACKOFF_BASE", "seconds", 1.0, 0),
    S("WEBHOOK_BACKOFF_MAX", "seconds", 3600.0, 0), S("WEBHOOK_RETRY_FOR", "seconds", 86400.0, 0),
    S("WEBHOOK_4XX_RETRIES", "whole", 3, 0), S("WEBHOOK_LEASE", "seconds", 10.0, 3, 3600),
    S("WEBHOOK_QUEUE_MAX", "whole", 10_000, 1), S("WEBHOOK_PARKED_MAX", "whole", 10_000, 1),
    S("DEMO", "flag", False), S("DEMO_INTERVAL", "seconds", 3.0, 0.01),
    # The ZeroMQ bridge
    S("BRIDGE_PULL", "text", "tcp://127.0.0.1:5557"), S("BRIDGE_ROUTER", "text", "tcp://127.0.0.1:5559"),
    S("BRIDGE_XPUB", "text", "tcp://127.0.0.1:5558"), S("BRIDGE_BACKLOG", "whole", 100_000, 1),
    S("BRIDGE_BATCH", "whole", 500, 1), S("BRIDGE_CONFIRM_TIMEOUT", "whole", 10, 1),
    S("BRIDGE_RCVHWM", "whole", 10_000, 1), S("BRIDGE_SNDHWM", "whole", 10_000, 1),
    S("BRIDGE_CURVE_SECRET", "text", ""), S("BRIDGE_CURVE_CLIENTS", "text", ""),
    S("BRIDGE_TRUST_LOCAL", "flag", False),
)
del S


