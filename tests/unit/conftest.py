"""tests/unit: the fast loop (``make test-fast``). Nothing here starts a process of its
own beside the session's redis-server, nor stops Redis (that is tests/integration), so:

- ``redis_server`` keeps its data in memory only (no append-only file to fsync on
  every write), and may not be killed;
- ``app`` is one Flask app for the whole session, on that Redis, which the ``redis``
  fixture empties before each test; ``client`` and ``runner`` are still per test.
  A test that needs other settings builds an app of its own, as before;
- ``live_server`` and ``smtp_server`` refuse: a test that needs one belongs in
  tests/integration.
"""
import pytest

from app import create_app
from app.settings import TestConfig
from tests.redis_cluster import session_redis


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    server = session_redis(tmp_path_factory.mktemp("redis"), durable=False)
    server.kill = _no_kill
    server.start()
    yield server
    server.stop()


def _no_kill(*args):
    raise AssertionError("a test that kills Redis belongs in tests/integration")


@pytest.fixture(scope="session")
def _session_app(redis_server):
    with pytest.MonkeyPatch.context() as env:  # as _no_stray_env has it for each test
        env.delenv("REDIS_URL", raising=False)
        env.setenv("SECRET_KEY", "test-secret-key")
        return create_app(TestConfig(redis_server.url))


@pytest.fixture
def app(_session_app, redis):
    return _session_app


@pytest.fixture
def live_server():
    pytest.fail("a test on a live server belongs in tests/integration")


@pytest.fixture
def smtp_server():
    pytest.fail("a test with an SMTP server belongs in tests/integration")
