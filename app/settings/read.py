"""Reading the environment: :func:`get` parses a declared setting into its typed
value, or ends the process with one line naming it and what it must be.

This is the only module of the web app, the workers and the bridge that reads
the process environment (tests/unit/test_settings.py checks it).
"""
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from app.redis_client import SentinelURLError, parse_cluster_url, parse_sentinel_url
from app.settings.declared import SETTINGS

ROOT = Path(__file__).resolve().parent.parent.parent
REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "redis+cluster")
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


def _bad(name, rule, raw):
    raise SystemExit(f"herald: {name} must be {rule}, not {raw!r}")


def _range(low, high, unit=""):
    if low is None:
        return ""
    if high is None:
        return f" of {low:g}{unit} or more"
    return f" from {low:g} to {high:g}{unit}"


def _parse(setting, raw):
    """The typed value of ``raw`` (a non-empty string) for ``setting``."""
    name, kind, low, high = setting.name, setting.kind, setting.low, setting.high
    if kind == "text":
        return raw
    if kind == "flag":
        return raw == "1" if raw in ("0", "1") else _bad(name, "1 or 0", raw)
    if kind == "whole":
        if not (raw.isascii() and raw.strip().lstrip("-").isdigit()):
            _bad(name, "a whole number" + _range(low, high), raw)
        value = int(raw)
        if (low is not None and value < low) or (high is not None and value > high):
            _bad(name, "a whole number" + _range(low, high), raw)
        return value
    if kind == "seconds":
        try:
            value = float(raw)
        except ValueError:
            _bad(name, "a number of seconds" + _range(low, high, " s"), raw)
        if not ((low is None or value >= low) and (high is None or value <= high)):
            _bad(name, f"from {low:g} to {high:g} seconds" if high is not None
                 else "a number of seconds" + _range(low, high, " s"), raw)
        return value
    if kind == "choice":
        return raw if raw in setting.choices else _bad(name, " or ".join(setting.choices), raw)
    if kind == "list":
        items = tuple(item.strip() for item in raw.split(",") if item.strip())
        unknown = [i for i in items if setting.choices and i not in setting.choices]
        if unknown:
            raise SystemExit(f"herald: {name} names unknown roles {unknown}; "
                             f"choose from {', '.join(setting.choices)}")
        return items
    raise AssertionError(f"{name}: unknown kind {kind}")


def get(name, environ=None):
    """The value of setting ``name`` (declared in ``SETTINGS``): from the environment
    when set and not empty, else its default. A bad value ends the process with
    one line naming it."""
    setting = SETTINGS[name]
    raw = (os.environ if environ is None else environ).get(name, "")
    return _parse(setting, raw) if raw != "" else setting.default


FROM_ENV_FILE = set()  # the names load_env_file set


def env_file():
    """The project's own settings file (``ENV_FILE``, default ``.env`` in the checkout)."""
    return Path(get("ENV_FILE") or ROOT / ".env")


def load_env_file():
    """Read the project's ``.env`` (``VAR_DIR=…``, one ``NAME=value`` a line; the file
    :func:`env_file` names) into this process's environment with python-dotenv, as
    Flask's CLI would: a variable already set wins. ``make run``, ``make example`` and
    ``bin/flask`` call it first (the one place that decides which file), and pass it on
    to what they start. The file read, or None when there is none."""
    path = env_file()
    if not path.is_file():
        return None
    from dotenv import dotenv_values  # only the entry points need it

    for name, value in dotenv_values(path, encoding="utf-8").items():
        if value is not None and name not in os.environ:
            os.environ[name] = value
            FROM_ENV_FILE.add(name)
    return path


def var_dir():
    """Where Herald keeps its local state (``VAR_DIR``, default ``var/``)."""
    return Path(get("VAR_DIR") or ROOT / "var")


def private_redis_socket():
    """The unix socket of the private redis-server that ``make run`` starts."""
    return var_dir() / "redis" / "redis.sock"


def redis_url():
    """``REDIS_URL``, or the private redis-server's socket when it is unset.

    A URL Herald cannot use ends the process with a one-line error naming it.
    """
    url = get("REDIS_URL")
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
    elif parts.scheme in ("redis+sentinel", "redis+cluster"):
        try:
            (parse_cluster_url if parts.scheme == "redis+cluster" else parse_sentinel_url)(url)
        except SentinelURLError as exc:
            problem = str(exc).removeprefix("REDIS_URL: ")
    if problem:
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        raise SystemExit(f"herald: REDIS_URL {problem}: {shown!r}")
    return url


def port():
    """``PORT`` (default 5000): where the web server listens."""
    return get("PORT")


def history_max():
    """``HISTORY_MAX``: notifications kept in ``herald:stream`` (approximately)."""
    return get("HISTORY_MAX")


def archive_dir():
    """``ARCHIVE_DIR``: the archiver's output and the Spark rollup's input."""
    return Path(get("ARCHIVE_DIR") or var_dir() / "archive")


def rollup_dir():
    """``ROLLUP_DIR``: the rollup job's output."""
    return Path(get("ROLLUP_DIR") or var_dir() / "rollup")


def herald_url():
    """``HERALD_URL``: where people reach Herald (links in emails), ending in "/";
    by default the dashboard on this machine's ``PORT``."""
    url = get("HERALD_URL") or f"http://127.0.0.1:{port()}/"
    return url if url.endswith("/") else url + "/"


HOST_PATTERN = re.compile(r"\*|(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*|[0-9a-f:.]+")
ANY_ADDRESS = {"", "0.0.0.0", "::", "[::]"}


def allowed_hosts():
    """``ALLOWED_HOSTS``: the host names requests may be addressed to (lower case; ``*.x``
    for x's subdomains, ``*`` for any). Unset: this machine's (localhost, 127.0.0.1,
    ::1), ``HOST`` when it names one interface, and ``HERALD_URL``'s host."""
    chosen = [name.lower().strip("[]").rstrip(".") for name in get("ALLOWED_HOSTS")]
    for name in chosen:
        if not HOST_PATTERN.fullmatch(name):
            _bad("ALLOWED_HOSTS", "host names (example.com, *.example.com, 10.0.0.5) or *", name)
    if chosen:
        return chosen
    names = ["localhost", "127.0.0.1", "::1"]
    if get("HOST").lower() not in ANY_ADDRESS:
        names.append(get("HOST").lower().strip("[]"))
    if get("HERALD_URL") and urlsplit(get("HERALD_URL")).hostname:
        names.append(urlsplit(get("HERALD_URL")).hostname)
    return names


def secure_cookies():
    """``SESSION_COOKIE_SECURE``; unset, the session cookie is Secure (sent over
    HTTPS only) unless Herald serves plain HTTP on loopback, as ``make run`` does."""
    chosen = get("SESSION_COOKIE_SECURE")
    return chosen if chosen is not None else get("HOST") not in LOOPBACK_HOSTS


def max_connections_per_address():
    """``MAX_CONNECTIONS_PER_ADDRESS``: 10,000 sockets, or no limit (0) behind trusted
    proxies, where every client has the proxy's address. Only the descriptor guard:
    sessions are what one address is limited in (MAX_SESSIONS_PER_ADDRESS,
    app/realtime/per_address.py), as a polling client holds several sockets."""
    chosen = get("MAX_CONNECTIONS_PER_ADDRESS")
    return chosen if chosen is not None else (0 if get("TRUSTED_PROXIES") else 10_000)


def secret_key():
    """``SECRET_KEY``, or one generated once and kept in ``var/secret_key``.

    Tokens and sessions must survive a restart and be shared by every web
    process, so a random key per process would not do.
    """
    if get("SECRET_KEY"):
        return get("SECRET_KEY")
    path = var_dir() / "secret_key"
    if not path.exists():
        import secrets
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
    return path.read_text().strip()


def child_environment(**overrides):
    """This process's environment for a child process, with ``overrides`` (those not
    empty) on top: a child reads its own settings from it."""
    return {**os.environ, **{name: value for name, value in overrides.items() if value}}


def is_set(name):
    """Whether setting ``name`` was given in the environment this process started
    with: not its default, nor the project's .env (the defaults ``make run`` uses too)."""
    return os.environ.get(name, "") != "" and name not in FROM_ENV_FILE


def export(name, value):
    """Set ``name`` to ``value`` in this process's environment, for what it starts
    (``make example`` so hands its children the free ports it chose)."""
    os.environ[name] = str(value)


def export_default(name, value):
    """Set ``name`` for what this process starts, unless it is set already (another
    program's variable, such as Spark's PYSPARK_PYTHON, not a Herald setting)."""
    os.environ.setdefault(name, value)
