"""The outbox at its edges: savepoints, cascades, a key replaced in one flush, sizes as
Herald counts them, and an idempotency key Herald already holds for another body."""
import math

import pytest
from sqlalchemy import ForeignKey, Integer, String, text
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

from herald_client import outbox_rows
from herald_client.outbox_relay import Relay, envelope_of
from herald_client.sqlalchemy import Outbox, OutboxError
from tests.integration.outbox.support import stream, tables
from tests.support import wait_until


class Base(DeclarativeBase):
    pass


class Board(Base):
    __tablename__ = "edge_boards"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    tasks: Mapped[list["Task"]] = relationship(cascade="all, delete-orphan")


class Task(Base):
    __tablename__ = "edge_tasks"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("edge_boards.id"))
    text: Mapped[str] = mapped_column(String(20000))


@pytest.fixture
def engine(database_url):
    with tables(database_url, Base.metadata) as engine:
        yield engine


@pytest.fixture
def outbox(engine, client):
    outbox = Outbox(client, poll=60.0)  # the relay looks only when woken
    outbox.track(Board, prefix="edge.board", data=lambda board: {"name": board.name})
    outbox.track(Task, prefix="edge.task", data=lambda task: {"text": task.text[:20]})
    outbox.table.drop(engine, checkfirst=True)
    outbox.create_table(engine)
    yield outbox
    outbox.close()


def topics(redis):
    return [(e["topic"], e["data"]["id"]) for e in stream(redis)]


def test_a_savepoint_rolled_back_leaves_what_was_written_before_it(engine, outbox, redis):
    outbox.start(engine)
    with Session(engine) as session:
        board = Board(name="kept")
        session.add(board)
        session.flush()  # its row is written
        savepoint = session.begin_nested()
        session.add(Board(name="dropped"))
        session.flush()
        savepoint.rollback()
        kept = board.id
        session.commit()  # must still wake the relay for "kept"
    wait_until(lambda: stream(redis), timeout=10, message="the kept board")
    assert topics(redis) == [("edge.board.created", kept)]


def test_cascades_and_orphans_are_deleted_events_and_collections_no_update(engine, outbox,
                                                                          redis):
    with Session(engine) as session:
        board = Board(name="b", tasks=[Task(text="one"), Task(text="two")])
        session.add(board)
        session.commit()
        ids = [task.id for task in board.tasks]
        board_id = board.id
        board.tasks.clear()  # orphans: deleted by the cascade, never in session.deleted
        session.commit()
    outbox.relay_once(engine)
    assert topics(redis)[-2:] == [("edge.task.deleted", ids[0]), ("edge.task.deleted", ids[1])]
    assert ("edge.board.updated", board_id) not in topics(redis)  # only its collection changed


def test_a_key_deleted_and_added_in_one_flush_is_one_update(engine, outbox, redis):
    with Session(engine) as session:
        session.add(Board(id=7, name="old"))
        session.commit()
        session.delete(session.get(Board, 7))
        session.add(Board(id=7, name="new"))
        session.commit()
    outbox.relay_once(engine)
    assert topics(redis) == [("edge.board.created", 7), ("edge.board.updated", 7)]
    assert stream(redis)[-1]["data"]["name"] == "new"


def test_sizes_are_counted_as_herald_counts_them(engine, outbox, redis):
    outbox.track(Task, prefix="edge.task", data=lambda task: {"text": task.text})
    with Session(engine) as session:
        board = Board(name="b")
        session.add(board)
        session.commit()
        board_id = board.id
        session.add(Task(board_id=board_id, text="é" * 8000))  # 16,000 bytes: it fits
        session.commit()
        session.add(Task(board_id=board_id, text="x" * 16360))  # with its version: it does not
        with pytest.raises(OutboxError, match="at most 16384 bytes encoded; give track"):
            session.commit()
        session.rollback()
    outbox.track(Task, prefix="edge.task", data=lambda task: {"ratio": math.nan})
    with Session(engine) as session:
        session.add(Task(board_id=board_id, text="nan"))
        with pytest.raises(OutboxError, match=r"data\.ratio is nan, which is not JSON"):
            session.commit()
    assert outbox.relay_once(engine) == 2
    assert stream(redis)[-1]["data"]["text"] == "é" * 8000


def test_a_batch_herald_holds_under_another_body_is_set_aside_never_rekeyed(
        engine, outbox, redis, client):
    with Session(engine) as session:
        session.add_all([Board(name="first"), Board(name="first too")])
        session.commit()
    row, _other = outbox_rows.first(engine, outbox.table)
    client.publish("edge.other", "another body under that key", idempotency_key=row.batch)
    with Session(engine) as session:
        session.add(Board(name="second"))
        session.commit()
    assert outbox.relay_once(engine) == 1  # "second"; the batch of "first" set aside whole
    assert [e["title"] for e in stream(redis)][0] == "another body under that key"
    assert [e["data"]["name"] for e in stream(redis)[1:]] == ["second"]
    assert outbox.counts(engine) == {"pending": 0, "sent": 1, "refused": 2}
    assert envelope_of(row)["data"]["name"] == "first"


def test_a_refusal_already_handled_by_another_relay_is_not_undone(engine, outbox, redis):
    with Session(engine) as session:
        session.add_all([Board(name="a"), Board(name="b")])
        session.commit()
    stale = outbox_rows.first(engine, outbox.table)
    outbox_rows.refuse(engine, outbox.table, stale, None, "refused")  # the first relay
    fresh = outbox_rows.claim(engine, outbox.table)  # claimed anew, under a new key
    assert fresh and fresh[0].batch != stale[0].batch
    outbox_rows.refuse(engine, outbox.table, stale, 0, "the same refusal, late")  # a second
    assert outbox_rows.claim(engine, outbox.table) == fresh  # still that batch, no error set
    assert outbox.counts(engine)["refused"] == 0


# ---- PostgreSQL: a relay in another process is woken by the commit (NOTIFY) ----------

@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_relay_nothing_in_its_process_wakes_ships_a_commit_at_once(engine, outbox, redis,
                                                                     client):
    """As ``flask herald relay`` in a process of its own: this Relay polls once a minute
    and no commit of its process wakes it, yet each commit is shipped within seconds,
    woken by the NOTIFY the commit sent; its listener killed, it listens again."""
    relay = Relay(client, engine, outbox.table, poll=60.0).start()
    try:
        wait_until(lambda: relay.listener.pid, timeout=10, message="the listener connected")
        first_pid = relay.listener.pid
        with Session(engine) as session:
            session.add(Board(name="woken"))
            session.commit()
        wait_until(lambda: topics(redis) == [("edge.board.created", 1)], timeout=10,
                   message="the commit shipped by the other relay")
        with engine.connect() as connection:  # the listening backend dies
            connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first_pid})
        wait_until(lambda: relay.listener.connects == 2 and relay.listener.pid, timeout=15,
                   message="the listener listening again")
        heard = relay.listener.notified
        with Session(engine) as session:
            session.add(Board(name="woken again"))
            session.commit()
        wait_until(lambda: relay.listener.notified > heard, timeout=10,
                   message="the second commit's NOTIFY heard on the new connection")
        wait_until(lambda: len(topics(redis)) == 2, timeout=10, message="the second commit")
        assert relay.listener.pid != first_pid
    finally:
        relay.stop()
    assert relay.thread is not None and not relay.thread.is_alive()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_on_sqlite_a_relay_nothing_in_its_process_wakes_sees_a_commit_at_once(
        engine, outbox, redis, client):
    """SQLite has no NOTIFY: the relay's watch reads PRAGMA data_version, which another
    connection's commit changes. The relay polls once a minute; each commit after the
    first (which its first round may have shipped) is shipped within seconds."""
    relay = Relay(client, engine, outbox.table, poll=60.0).start()
    try:
        wait_until(lambda: relay.listener.connects == 1, timeout=10, message="the watch")
        for count, name in enumerate(("first", "second", "third"), start=1):
            with Session(engine) as session:
                session.add(Board(name=name))
                session.commit()
            wait_until(lambda count=count: len(topics(redis)) == count, timeout=10,
                       message=f"commit {count} shipped")
        watch = relay.listener
        assert watch.notified >= 2
    finally:
        relay.stop()
    assert not watch.thread.is_alive() and not relay.thread.is_alive()
