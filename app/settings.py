"""Configuration from the environment.

Every process (web, workers, CLI, Spark driver) builds its settings here, so
they agree on where Redis is. With ``REDIS_URL`` unset they all use the
private redis-server that ``make run`` starts under ``var/redis/`` on a unix
socket, which needs no port and cannot clash with another Redis.
"""
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent


def var_dir():
    """Where Herald keeps its local state (``VAR_DIR``, default ``var/``)."""
    return Path(os.environ.get("VAR_DIR") or ROOT / "var")


def private_redis_socket():
    """The unix socket of the private redis-server that ``make run`` starts."""
    return var_dir() / "redis" / "redis.sock"


REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+sentinel")


def redis_url():
    """``REDIS_URL``, or the private redis-server's socket when it is unset.

    A URL Herald cannot use ends the process with a one-line error naming it.
    """
    url = os.environ.get("REDIS_URL")
    if not url:
        return f"unix://{private_redis_socket()}"
    parts = urlsplit(url)
    problem = None
    if parts.scheme not in REDIS_SCHEMES:
        problem = "must start with " + ", ".join(f"{s}://" for s in REDIS_SCHEMES)
    elif parts.scheme in ("redis", "rediss"):
        try:
            parts.port  # noqa: B018 (raises ValueError for a bad port)
        except ValueError:
            problem = "has a port that is not a number from 1 to 65535"
        if not parts.hostname:
            problem = "names no host"
    elif parts.scheme == "unix" and not parts.path:
        problem = "names no socket path"
    if problem:
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        raise SystemExit(f"herald: REDIS_URL {problem}: {shown!r}")
    return url


def port():
    """``PORT`` (default 5000): where the web server listens."""
    raw = os.environ.get("PORT") or "5000"
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 65535):
        raise SystemExit(f"herald: PORT must be a whole number from 1 to 65535, not {raw!r}")
    return int(raw)


def _secret_key():
    """``SECRET_KEY``, or one generated once and kept in ``var/secret_key``.

    Tokens and sessions must survive a restart and be shared by every web
    process, so a random key per process would not do.
    """
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = var_dir() / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
    return path.read_text().strip()


def history_max():
    """``HISTORY_MAX``: notifications kept in ``herald:stream`` (approximately)."""
    return _int("HISTORY_MAX", 100_000)


def archive_dir():
    """``ARCHIVE_DIR``: the archiver's output and the Spark rollup's input."""
    return Path(os.environ.get("ARCHIVE_DIR") or var_dir() / "archive")


def herald_url():
    """``HERALD_URL``: where people reach Herald (links in emails), ending in "/";
    by default the dashboard on this machine's ``PORT``."""
    url = os.environ.get("HERALD_URL") or f"http://127.0.0.1:{port()}/"
    return url if url.endswith("/") else url + "/"


LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


def _secure_cookies():
    """``SESSION_COOKIE_SECURE``: 1 or 0; unset, the session cookie is Secure
    (sent over HTTPS only) unless Herald serves plain HTTP on loopback, as
    ``make run`` does by default."""
    value = os.environ.get("SESSION_COOKIE_SECURE", "")
    if value in ("0", "1"):
        return value == "1"
    if value:
        raise SystemExit(f"SESSION_COOKIE_SECURE must be 1 or 0, not {value!r}")
    return os.environ.get("HOST", "127.0.0.1") not in LOOPBACK_HOSTS


def _int(name, default):
    value = os.environ.get(name)
    try:
        return int(value) if value else default
    except ValueError:
        raise SystemExit(f"herald: {name} must be a whole number, not {value!r}") from None


def seconds(name, default, low, high):
    """The setting ``name`` in seconds, from ``low`` to ``high`` (``default`` when unset);
    a bad one ends the process with one line naming it."""
    raw = os.environ.get(name) or str(default)
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"herald: {name} must be a number of seconds, not {raw!r}") from None
    if not low <= value <= high:
        raise SystemExit(f"herald: {name} must be from {low:g} to {high:g} seconds, not {raw!r}")
    return value


class Config:
    """Settings of a running Herald, read from the environment when built."""

    def __init__(self, **overrides):
        self.REDIS_URL = redis_url()
        self.SECRET_KEY = overrides.pop("SECRET_KEY", None) or _secret_key()
        # Seconds a token from POST /auth/token stays valid.
        self.TOKEN_TTL = _int("TOKEN_TTL", 3600)
        # Entries kept in herald:stream (approximate trimming).
        self.HISTORY_MAX = history_max()
        # Topic prefixes one user may subscribe to.
        self.MAX_SUBSCRIPTIONS = _int("MAX_SUBSCRIPTIONS", 100)
        # Packets waiting for one client before it is disconnected as too slow.
        self.SLOW_CLIENT_MAX_QUEUE = _int("SLOW_CLIENT_MAX_QUEUE", 1000)
        # Socket.IO messages one connection may send a second, and in one burst;
        # past that it is cut off (app/realtime/budgets.py).
        self.CLIENT_MESSAGE_RATE = _int("CLIENT_MESSAGE_RATE", 20)
        self.CLIENT_MESSAGE_BURST = _int("CLIENT_MESSAGE_BURST", 100)
        # Seconds a new connection has to join the namespace, and to send its HTTP
        # request (a half-sent one is closed then).
        self.JOIN_TIMEOUT = _int("JOIN_TIMEOUT", 10)
        self.REQUEST_TIMEOUT = _int("REQUEST_TIMEOUT", 10)
        # Connections a web process takes (0: what its file-descriptor limit allows,
        # less a reserve), and from one client address (0: no limit; behind a proxy
        # every client has the proxy's address, so limit there: deploy/nginx.conf).
        self.MAX_CONNECTIONS = _int("MAX_CONNECTIONS", 0)
        self.MAX_CONNECTIONS_PER_ADDRESS = _int(
            "MAX_CONNECTIONS_PER_ADDRESS", 0 if _int("TRUSTED_PROXIES", 0) else 500)
        # A reconnect storm (app/realtime/storm.py): Socket.IO connects and event streams
        # admitted a second, and at once (ADMIT_RATE 0: no bound); replays run at once,
        # and waiting their turn (REPLAY_CONCURRENCY 0: no bound). Past them a connect
        # is refused at once with "unavailable: busy, retry later" and a retry_after.
        self.ADMIT_RATE = _int("ADMIT_RATE", 0)
        self.ADMIT_BURST = _int("ADMIT_BURST", 0)
        self.REPLAY_CONCURRENCY = _int("REPLAY_CONCURRENCY", 32)
        self.REPLAY_QUEUE = _int("REPLAY_QUEUE", 256)
        # Seconds a websocket may make no progress sending or receiving.
        self.WEBSOCKET_TIMEOUT = _int("WEBSOCKET_TIMEOUT", 60)
        # Server-Sent Events: seconds between heartbeat comments on an idle stream
        # (proxies close quiet connections), and how long a stream token (for
        # EventSource, which cannot send headers) may be used.
        self.SSE_HEARTBEAT = _int("SSE_HEARTBEAT", 15)
        self.STREAM_TOKEN_TTL = _int("STREAM_TOKEN_TTL", 120)
        # The archiver's output (Spark's input) and the rollup job's output.
        self.ARCHIVE_DIR = str(archive_dir())
        self.ROLLUP_DIR = os.environ.get("ROLLUP_DIR") or str(var_dir() / "rollup")
        self.SPARK_LOG_DIR = str(var_dir() / "spark")
        # Tokens minted by the host app (JWTs; see app/web/auth/host_tokens.py): an HS256
        # secret and/or a PEM public key file (RS256 or ES256); aud/iss checked when set.
        self.JWT_SECRET = os.environ.get("JWT_SECRET", "")
        self.JWT_PUBLIC_KEY = os.environ.get("JWT_PUBLIC_KEY", "")
        self.JWT_AUDIENCE = os.environ.get("JWT_AUDIENCE", "")
        self.JWT_ISSUER = os.environ.get("JWT_ISSUER", "")
        # Seconds of clock difference with the host app tolerated on exp/nbf/iat.
        self.JWT_LEEWAY = _int("JWT_LEEWAY", 5)
        # Origins allowed to open a Socket.IO connection (and to call the API and load
        # /client/herald.js from a page of theirs); empty = same origin only.
        self.SOCKETIO_ORIGINS = [o for o in os.environ.get("SOCKETIO_ORIGINS", "").split(",") if o]
        self.MAX_CONTENT_LENGTH = 64 * 1024
        self.SESSION_COOKIE_HTTPONLY = True
        self.SESSION_COOKIE_SAMESITE = "Lax"
        self.SESSION_COOKIE_SECURE = _secure_cookies()
        self.SESSION_COOKIE_NAME = "herald_session"
        self.PERMANENT_SESSION_LIFETIME = _int("SESSION_LIFETIME", 12 * 3600)
        # With it set, /metrics asks for "Authorization: Bearer <METRICS_TOKEN>".
        self.METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
        # Proxies in front of Herald whose X-Forwarded-For/-Proto to believe (nginx: 1).
        self.TRUSTED_PROXIES = _int("TRUSTED_PROXIES", 0)
        # Rate limits (flask-limiter syntax); storage is Herald's Redis.
        self.RATELIMIT_LOGIN = os.environ.get("RATELIMIT_LOGIN", "10 per minute")
        self.RATELIMIT_TOKEN = os.environ.get("RATELIMIT_TOKEN", "30 per minute")
        self.RATELIMIT_SESSION_TOKEN = os.environ.get("RATELIMIT_SESSION_TOKEN", "60 per minute")
        self.RATELIMIT_API_KEY = os.environ.get("RATELIMIT_API_KEY", "500 per second")
        self.WTF_CSRF_TIME_LIMIT = None
        # Worker roles whose heartbeat /readyz requires (app/ops/heartbeats.py; none by default:
        # a web process delivers without any worker).
        from app.ops.heartbeats import required_roles
        self.READY_REQUIRES = required_roles()
        # Where people reach Herald, for links in emails (empty: see herald_url()).
        self.HERALD_URL = os.environ.get("HERALD_URL", "")
        self.TESTING = False
        for name, value in overrides.items():
            setattr(self, name, value)


class TestConfig(Config):
    """Settings for tests: the caller's Redis and a fixed key; CSRF stays on."""

    __test__ = False  # a settings class, not a pytest test class

    def __init__(self, redis_url, **overrides):
        overrides.setdefault("SECRET_KEY", "test-secret-key")
        super().__init__(REDIS_URL=redis_url, TESTING=True, **overrides)
