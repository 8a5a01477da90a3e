"""The transactional outbox's tests (herald_client.sqlalchemy), which must hold on
SQLite and on PostgreSQL alike (the database fixtures are tests/conftest.py's).

- ``postgres_cluster`` (session): a private PostgreSQL cluster
  (tests/databases.py), started when a test first needs it, stopped at the end;
  its URL names its own database, which the tests leave alone.
- ``postgres_url``: a fresh, empty database on that cluster for each test
  (dropped after): ``postgresql+psycopg://postgres@127.0.0.1:<port>/<database>``.
- ``sqlite_url``: a SQLite file database under the test's tmp_path.
- ``database_url``: each of the two in turn (test ids ``sqlite``, ``postgresql``).
- ``client``: a HeraldClient on the live Herald with an API key of its own (few
  retries: a test that expects a failure gets it at once).

No PostgreSQL installed fails these tests (run ``make test``: bin/setup installs
it); they are never skipped.
"""
import pytest

from app.users import accounts
from herald_client import HeraldClient, retry_policy


@pytest.fixture
def client(live_server, redis):
    key = accounts.create_api_key(redis, "host-app")
    with HeraldClient(live_server.url, key, retry=retry_policy(retries=1, backoff=0.05)) as client:
        yield client
