"""Shared fixtures, all on real components.

- ``redis_server``: a redis-server the tests start on a free port (append-only
  file on, data in a temporary folder), stopped at the end of the session;
  ``redis`` hands each test an emptied database on it.
- ``app`` / ``client`` / ``runner``: the Flask app on that Redis.
- ``live_server``: ``python wsgi.py`` in a process of its own (gevent,
  Socket.IO, relay), as in production; stopped by the test that started it.
- ``smtp_server``: aiosmtpd on a free port; ``.messages`` are the emails it took;
- ``sharded``: this test (and every process it starts) on a history of
  ``SHARDS`` shards (STREAM_SHARDS, app/stream/shards.py); ``HERALD_TEST_SHARDS=N``
  runs the whole session so;
- ``browser`` / ``page``: headless Debian Chromium driven by Playwright
  (see tests/integration/e2e/conftest.py).

Tests are chosen by path: tests/unit mirrors app/ (and workers/) and starts no
process of its own (``make test-fast`` runs it); tests/integration holds
whatever starts a web server, a worker process, Chromium, Spark or a fuzzer,
or stops Redis. Markers come from the folder (see below).
"""
import os
import sys
from pathlib import Path
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import create_app  # noqa: E402
from app.settings import TestConfig  # noqa: E402
from app.stream import shards  # noqa: E402
from app.users import accounts  # noqa: E402
from tests import support  # noqa: E402
from tests.databases import PostgresMissing, fresh_database, postgres_server  # noqa: E402
from tests.redis_cluster import ON_CLUSTER, session_redis  # noqa: E402
from tests.support import LiveServer, SmtpServer  # noqa: E402

# HERALD_TEST_SHARDS=N: every test, and every process one starts, on N shards.
if os.environ.get("HERALD_TEST_SHARDS"):
    os.environ["STREAM_SHARDS"] = os.environ["HERALD_TEST_SHARDS"]
SESSION_SHARDS = shards.use(int(os.environ.get("STREAM_SHARDS") or 1)).count
SHARDS = 3  # the ``sharded`` fixture's

ADMIN = ("ada", "ada-password")
USER = ("bob", "bob-password")


AREAS = ("e2e", "spark", "fuzz")  # tests/integration/<area>: tests with the marker of that name


def pytest_collection_modifyitems(items):
    """Markers come from the folder: every test under tests/integration is ``slow``,
    and those under tests/integration/e2e, spark and fuzz carry that marker too."""
    for item in items:
        if not item.path.is_relative_to(ROOT / "tests"):
            continue  # an example app's own tests (examples/adopt/tests): its own business
        parts = item.path.relative_to(ROOT / "tests").parts
        if ON_CLUSTER and item.get_closest_marker("single_redis"):
            item.add_marker(pytest.mark.skip(reason=item.get_closest_marker("single_redis").args[0]))
        if parts[0] == "integration":
            item.add_marker("slow")
            if parts[1] in AREAS:
                item.add_marker(parts[1])


@pytest.fixture(autouse=True)
def _close_left_listeners():
    """Close the Socket.IO listeners a test left open (it failed before
    closing them), so none keeps reconnecting into the tests after it."""
    yield
    for listener in list(support.OPEN_LISTENERS):
        listener.close()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    server = session_redis(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis(redis_server):
    client = redis_server.client()
    client.flushall()
    support.current_redis = client
    yield client
    support.current_redis = None
    client.close()


@pytest.fixture
def app(redis_server, redis, tmp_path):
    return create_app(TestConfig(redis_server.url))


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


_HASHES = {}  # password -> a werkzeug hash of it, made once per session
_hash = accounts.generate_password_hash


def _hash_once(password):
    if password not in _HASHES:
        _HASHES[password] = _hash(password)
    return _HASHES[password]


def create_user(redis, name, password, admin=False):
    """accounts.create_user, all of it, except that each password is hashed once per
    session: a hash costs ~0.1 s, and most tests start with ``user`` or ``admin``."""
    with mock.patch.object(accounts, "generate_password_hash", _hash_once):
        accounts.create_user(redis, name, password, admin=admin)


@pytest.fixture
def admin(redis):
    create_user(redis, *ADMIN, admin=True)
    return ADMIN


@pytest.fixture
def user(redis):
    create_user(redis, *USER)
    return USER


@pytest.fixture
def api_key(redis):
    return accounts.create_api_key(redis, "publisher")


@pytest.fixture
def live_server(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def smtp_server():
    """A real SMTP server (aiosmtpd) on a free loopback port, keeping what it accepts."""
    server = SmtpServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def sharded(monkeypatch):
    """This test, and every process it starts, on a history of SHARDS shards; the app
    fixtures made after it (``app``, ``live_server``) are too."""
    monkeypatch.setenv("STREAM_SHARDS", str(SHARDS))
    yield shards.use(SHARDS)
    shards.use(SESSION_SHARDS)


@pytest.fixture(autouse=True)
def _session_shards():
    """Each test starts on the session's shards (a test's app may have set others)."""
    shards.use(SESSION_SHARDS)


@pytest.fixture(autouse=True)
def _no_stray_env(monkeypatch):
    """Tests never talk to a developer's own Redis by accident."""
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("SECRET_KEY", "test-secret-key")


# -- SQL databases (the outbox's and the host apps' tests): tests/databases.py ---------------
# postgres_cluster (session): a private PostgreSQL cluster, started when first needed;
# postgres_url: a fresh database on it per test; sqlite_url: a file under tmp_path;
# database_url: each of the two in turn (test ids sqlite, postgresql). No PostgreSQL
# installed fails these tests (make test installs it); they are never skipped.

@pytest.fixture(scope="session")
def postgres_cluster():
    try:
        with postgres_server() as url:
            yield url
    except PostgresMissing as missing:
        pytest.fail(str(missing), pytrace=False)


@pytest.fixture
def postgres_url(postgres_cluster):
    with fresh_database(postgres_cluster) as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'outbox.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request):
    name = "postgres_url" if request.param == "postgresql" else "sqlite_url"
    return request.getfixturevalue(name)
