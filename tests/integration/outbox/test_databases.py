"""The outbox tests' databases (conftest.py, tests/databases.py) work as promised."""
import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests import databases
from tests.databases import fresh_database, postgres_server
from tests.support import wait_until

ROWS = sa.Table("probe", sa.MetaData(),
                sa.Column("id", sa.Integer, primary_key=True),
                sa.Column("note", sa.String(40), nullable=False))


@pytest.fixture
def engine(database_url):
    engine = sa.create_engine(database_url)
    yield engine
    engine.dispose()


def test_two_connections_see_each_others_committed_rows(engine, database_url):
    ROWS.metadata.create_all(engine)
    with engine.connect() as first, engine.connect() as second:
        first.execute(ROWS.insert().values(id=1, note="from the first"))
        assert second.execute(sa.select(sa.func.count()).select_from(ROWS)).scalar() == 0
        second.rollback()  # end its read, so that SQLite lets the first one commit
        first.commit()
        assert second.execute(sa.select(ROWS.c.note)).scalars().all() == ["from the first"]
        second.execute(ROWS.insert().values(id=2, note="from the second"))
        second.commit()
        first.rollback()  # a new transaction sees what was committed since
        assert first.execute(sa.select(ROWS.c.note).order_by(ROWS.c.id)).scalars().all() == [
            "from the first", "from the second"]
    assert engine.dialect.name == ("postgresql" if database_url.startswith("postgresql")
                                   else "sqlite")


def test_each_postgres_url_is_a_fresh_database_dropped_after(postgres_url, postgres_cluster):
    """Tables made in one test's database are not in the next one's; each is dropped after."""
    engine = sa.create_engine(postgres_url)
    try:
        ROWS.metadata.create_all(engine)
        with fresh_database(postgres_cluster) as other:
            other_engine = sa.create_engine(other)
            assert not sa.inspect(other_engine).has_table("probe")
            other_engine.dispose()
        listed = sa.select(sa.column("datname")).select_from(sa.table("pg_database"))
        with engine.connect() as connection:
            names = connection.execute(listed).scalars().all()
        assert postgres_url.rsplit("/", 1)[1] in names
        assert other.rsplit("/", 1)[1] not in names
    finally:
        engine.dispose()


def test_sqlite_is_a_file_under_tmp_path(sqlite_url, tmp_path):
    engine = sa.create_engine(sqlite_url)
    try:
        with engine.begin() as connection:
            connection.execute(sa.text("CREATE TABLE t (x INTEGER)"))
    finally:
        engine.dispose()
    assert (tmp_path / "outbox.db").is_file()


def _alive(pid):
    """A process that has not exited (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_postgres_server_stops_and_removes_its_folder_after():
    with postgres_server("probe") as url:
        assert url.startswith("postgresql+psycopg://postgres@127.0.0.1:") and url.endswith("/probe")
        engine = sa.create_engine(url)
        with engine.connect() as connection:  # left open: the stop must not wait for it
            backend = connection.execute(sa.text("SELECT pg_backend_pid()")).scalar()
            folder = Path(connection.execute(sa.text("SHOW data_directory")).scalar()).parent
            listen = connection.execute(sa.text("SHOW listen_addresses")).scalar()
            postmaster = int(Path(f"/proc/{backend}/stat").read_text()
                             .rsplit(")", 1)[1].split()[1])  # the backend's parent
            assert listen == "127.0.0.1"
            assert _alive(postmaster) and folder.is_dir()
            assert folder.name.startswith("herald-pg-")
    engine.dispose()
    assert not _alive(postmaster) and not _alive(backend)
    assert not folder.exists()


def test_postgres_server_fails_clearly_without_postgres(monkeypatch, tmp_path):
    monkeypatch.setattr(databases, "POSTGRES_ROOT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(databases.PostgresMissing, match=r"run `make test`"):
        with postgres_server():
            pass  # pragma: no cover


def test_a_failing_test_still_stops_the_server():
    with pytest.raises(RuntimeError, match="the test failed"):
        with postgres_server() as url:
            engine = sa.create_engine(url)
            with engine.connect() as connection:
                backend = connection.execute(sa.text("SELECT pg_backend_pid()")).scalar()
                raise RuntimeError("the test failed")
    engine.dispose()
    wait_until(lambda: not _alive(backend), timeout=5, message="the backend to be gone")
    assert os.path.isdir("/proc/self")
