"""The Flask app's settings object, built from the declared environment settings."""
from app.settings.read import (
    allowed_hosts,
    archive_dir,
    get,
    max_connections_per_address,
    redis_url,
    rollup_dir,
    secret_key,
    secure_cookies,
    var_dir,
)

# Config attributes read from the setting of the same name (see app/settings/declared.py).
SAME_NAME = (
    "TOKEN_TTL", "HISTORY_MAX", "MAX_SUBSCRIPTIONS", "SLOW_CLIENT_MAX_QUEUE",
    "CLIENT_MESSAGE_RATE", "CLIENT_MESSAGE_BURST", "JOIN_TIMEOUT", "REQUEST_TIMEOUT",
    "MAX_CONNECTIONS", "MAX_HANDSHAKES", "MAX_SESSIONS_PER_ADDRESS", "ADMIT_RATE", "ADMIT_BURST",
    "REPLAY_CONCURRENCY", "REPLAY_QUEUE",
    "WEBSOCKET_TIMEOUT", "SSE_HEARTBEAT", "STREAM_TOKEN_TTL", "JWT_SECRET", "JWT_PUBLIC_KEY",
    "JWT_AUDIENCE", "JWT_ISSUER", "JWT_LEEWAY", "JWT_MAX_TTL", "METRICS_TOKEN", "TRUSTED_PROXIES",
    "RATELIMIT_LOGIN", "RATELIMIT_TOKEN", "RATELIMIT_SESSION_TOKEN", "RATELIMIT_API_KEY",
    "HERALD_URL", "PUBLISH_REPLICAS", "PUBLISH_REPLICA_TIMEOUT", "STREAM_SHARDS",
)


class Config:
    """Settings of a running Herald, read from the environment when built.

    What each means: the README's settings table. ``overrides`` replace any of
    them (tests, the CLI)."""

    def __init__(self, **overrides):
        self.REDIS_URL = redis_url()
        self.SECRET_KEY = overrides.pop("SECRET_KEY", None) or secret_key()
        for name in SAME_NAME:
            setattr(self, name, get(name))
        self.MAX_CONNECTIONS_PER_ADDRESS = max_connections_per_address()
        self.ARCHIVE_DIR = str(archive_dir())
        self.ROLLUP_DIR = str(rollup_dir())
        self.SPARK_LOG_DIR = str(var_dir() / "spark")
        self.SOCKETIO_ORIGINS = list(get("SOCKETIO_ORIGINS"))
        self.ALLOWED_HOSTS = allowed_hosts()
        self.READY_REQUIRES = list(get("READY_REQUIRES"))
        self.MAX_CONTENT_LENGTH = 64 * 1024
        self.SESSION_COOKIE_HTTPONLY = True
        self.SESSION_COOKIE_SAMESITE = "Lax"
        self.SESSION_COOKIE_SECURE = secure_cookies()
        self.SESSION_COOKIE_NAME = "herald_session"
        self.PERMANENT_SESSION_LIFETIME = get("SESSION_LIFETIME")
        self.WTF_CSRF_TIME_LIMIT = None
        self.TESTING = False
        for name, value in overrides.items():
            setattr(self, name, value)


class TestConfig(Config):
    """Settings for tests: the caller's Redis and a fixed key; CSRF stays on."""

    __test__ = False  # a settings class, not a pytest test class

    def __init__(self, redis_url, **overrides):
        overrides.setdefault("SECRET_KEY", "test-secret-key")
        super().__init__(REDIS_URL=redis_url, TESTING=True, **overrides)
