"""The transactional outbox (herald_client.sqlalchemy.Outbox) against a live Herald, on
SQLite and on PostgreSQL (a private server of the tests' own: tests/databases.py)."""
import json
import threading

import pytest
from sqlalchemy import BigInteger, Column, Float, Integer, MetaData, String, Table, Text, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from app.stream.keys import ONCE
from herald_client import HeraldClient, Unavailable, outbox_rows, retry_policy
from herald_client.sqlalchemy import Outbox, OutboxError
from tests.integration.outbox.support import stream, tables
from tests.redis_cluster import every_key
from tests.support import free_port, wait_until


class Base(DeclarativeBase):
    pass


class Card(Base):
    __tablename__ = "cards"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    column: Mapped[str] = mapped_column(String(20), default="todo")
    owner: Mapped[str | None] = mapped_column(String(300), nullable=True)


class Note(Base):
    """A model with a version column SQLAlchemy keeps (version_id_col)."""
    __tablename__ = "notes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    text: Mapped[str] = mapped_column(String(200))
    revision: Mapped[int] = mapped_column(Integer, nullable=False)
    __mapper_args__ = {"version_id_col": revision}


class Untracked(Base):
    __tablename__ = "untracked"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)


@pytest.fixture
def engine(database_url):
    with tables(database_url, Base.metadata) as engine:
        yield engine


@pytest.fixture
def outbox(engine, client):
    outbox = Outbox(client, session=Session)
    outbox.track(Card, prefix="board.card",
                 data=lambda card: {"title": card.title, "column": card.column},
                 title=lambda card, action, changes: f"{action} {card.title} {sorted(changes)}",
                 user=lambda card: card.owner)
    outbox.track(Note, prefix="notes")
    outbox.table.drop(engine, checkfirst=True)
    outbox.create_table(engine)
    yield outbox
    outbox.close()


def test_created_updated_deleted_publish_after_the_commit_in_order(engine, outbox, redis):
    with Session(engine) as session:
        card = Card(title="Write docs")
        session.add(card)
        session.commit()
        card.column = "doing"
        session.commit()
        session.delete(card)
        assert stream(redis) == []  # nothing before the relay ships
        session.commit()
    assert outbox.relay_once(engine) == 3
    events = stream(redis)
    assert [e["topic"] for e in events] == ["board.card.created", "board.card.updated",
                                            "board.card.deleted"]
    assert all(e["kind"] == "data" for e in events)
    assert [e["data"]["id"] for e in events] == [card.id] * 3
    versions = [e["data"]["version"] for e in events]
    assert versions == sorted(versions) and len(set(versions)) == 3
    assert events[1]["data"]["column"] == "doing"
    assert events[1]["title"] == "updated Write docs ['column']"
    assert outbox.relay_once(engine) == 0  # each once
    with engine.connect() as connection:
        assert outbox.cursor(connection) == events[-1]["id"]


def test_a_rollback_publishes_nothing_and_untracked_models_nothing(engine, outbox, redis):
    with Session(engine) as session:
        session.add(Card(title="Never"))
        session.flush()  # the outbox row is written ...
        session.rollback()  # ... and goes with the transaction
        session.add(Untracked())
        session.commit()
    assert outbox.relay_once(engine) == 0
    assert stream(redis) == []
    assert outbox.counts(engine) == {"pending": 0, "sent": 0, "refused": 0}


def test_versions_are_the_records_own_when_it_has_one(engine, outbox, redis):
    with Session(engine) as session:
        note = Note(text="a")
        session.add(note)
        session.commit()
        note.text = "b"
        session.commit()
    outbox.relay_once(engine)
    assert [(e["data"]["version"], e["data"]["text"]) for e in stream(redis)] == [(1, "a"), (2, "b")]


def test_private_records_go_to_their_owner_only(engine, outbox, redis):
    with Session(engine) as session:
        session.add(Card(title="Mine", owner="alice"))
        session.commit()
    outbox.relay_once(engine)
    assert stream(redis)[0]["user"] == "alice"


def test_rows_go_out_in_commit_order_not_write_order(engine, outbox, redis):
    """The first to write an outbox row is not the first published: the first to commit
    is. On PostgreSQL a transaction that wrote rows holds nothing another waits for
    until its own commit; SQLite has one writer, so there the second waits."""
    first = Session(engine)
    first.add(Card(title="first"))
    first.flush()  # an outbox row written, the transaction still open

    def second():
        with Session(engine) as session:
            session.add(Card(title="second"))
            session.commit()

    thread = threading.Thread(target=second)
    thread.start()
    if engine.dialect.name == "postgresql":
        thread.join(20)
        assert not thread.is_alive()  # committed while the first is still open
        expected = ["second", "first"]
    else:
        expected = ["first", "second"]  # the second waits for SQLite's one write lock
    first.commit()
    first.close()
    thread.join(20)
    assert not thread.is_alive()
    with engine.connect() as connection:  # numbered by the commits themselves, not adopted
        assert None not in connection.execute(select(outbox.table.c.seq)).scalars().all()
    outbox.relay_once(engine)
    assert [e["data"]["title"] for e in stream(redis)] == expected


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_rows_locked_before_a_tracked_flush_never_deadlock(engine, outbox, redis):
    """Two transactions, each holding a row the other then wants, with outbox rows
    written in between: the ordering of the commits takes no lock a transaction could
    hold while it waits for a row, so the second simply waits for the first."""
    with Session(engine) as session:
        a, b = Card(title="a"), Card(title="b")
        session.add_all([a, b])
        session.commit()
        a_id, b_id = a.id, b.id
    assert outbox.relay_once(engine) == 2
    one, two = Session(engine), Session(engine)
    for session in (one, two):
        session.execute(text("SET LOCAL lock_timeout = '20s'"))
    two_b = two.get(Card, b_id, with_for_update=True)  # two holds b
    one.get(Card, a_id).title = "a by one"
    one.flush()  # one has written an outbox row (and holds a)
    failed = []

    def second():
        try:
            two_b.title = "b by two"
            two.commit()
        except Exception as exc:  # a deadlock PostgreSQL broke
            failed.append(exc)
        finally:
            two.close()

    thread = threading.Thread(target=second)
    thread.start()
    try:
        one_b = one.get(Card, b_id, with_for_update=True, populate_existing=True)  # waits for two
        one_b.title += " then one"
        one.commit()
    finally:
        one.close()
        thread.join(30)
    assert failed == []
    assert outbox.relay_once(engine) == 3
    assert [e["data"]["title"] for e in stream(redis)[2:]] == ["b by two", "a by one",
                                                               "b by two then one"]


def test_a_commit_with_a_savepoint_still_open_numbers_its_rows(engine, outbox, redis):
    with Session(engine) as session:
        session.add(Card(title="before"))
        session.begin_nested()
        session.add(Card(title="in the savepoint"))
        session.commit()  # the savepoint and the transaction with it
    assert outbox.relay_once(engine) == 2
    assert [e["data"]["title"] for e in stream(redis)] == ["before", "in the savepoint"]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # see below
def test_a_session_joined_to_the_callers_transaction_ships_at_the_callers_commit(
        engine, outbox, redis):
    """(Not on pysqlite: it emits no BEGIN, so the session's SAVEPOINT is SQLite's
    outermost transaction and its RELEASE commits; SQLAlchemy's pysqlite recipe for
    SAVEPOINT fixes that. SQLite's rows need nothing of the commit anyway.)"""
    with engine.connect() as connection:
        with connection.begin():  # the host app's own transaction, the session inside it
            session = Session(bind=connection, join_transaction_mode="create_savepoint")
            session.add(Card(title="joined"))
            session.commit()  # the savepoint only
            session.close()
            assert outbox.relay_once(engine) == 0  # not committed yet
    assert outbox.relay_once(engine) == 1
    assert [e["data"]["title"] for e in stream(redis)] == ["joined"]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # SQLite numbers at the write
def test_rows_a_commit_left_unnumbered_are_shipped_by_the_next_relay(engine, outbox, redis):
    """An Outbox closed between a flush and its commit hears no commit: the rows are
    committed without their place, and a relay numbers them and ships them."""
    with Session(engine) as session:
        session.add(Card(title="left behind"))
        session.flush()
        outbox.close()
        session.commit()
    assert outbox.counts(engine)["pending"] == 1
    assert outbox.relay_once(engine) == 1
    assert [e["data"]["title"] for e in stream(redis)] == ["left behind"]


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # SQLite numbers at the write
def test_a_commit_whose_numbering_fails_leaves_no_transaction_open(engine, outbox, redis):
    """The numbering statement waits for the turn; here it gives up (lock_timeout): the
    commit fails, and its connection is not pooled with the failed transaction open
    (holding its row locks and, had it got it, the turn)."""
    holder = engine.connect()
    holder.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": outbox_rows.WRITERS_LOCK})
    holder_pid = holder.execute(text("SELECT pg_backend_pid()")).scalar()
    try:
        with Session(engine) as session:
            session.execute(text("SET LOCAL lock_timeout = '200ms'"))
            session.add(Card(title="never committed"))
            with pytest.raises(OperationalError, match="lock timeout"):
                session.commit()
        with engine.connect() as look:
            stuck = look.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND state LIKE 'idle in transaction%' AND pid <> :holder"),
                {"holder": holder_pid}).scalar()
        assert stuck == 0
    finally:
        holder.rollback()
        holder.close()
    with Session(engine) as session:
        session.add(Card(title="committed"))
        session.commit()
    assert outbox.relay_once(engine) == 1
    assert [e["data"]["title"] for e in stream(redis)] == ["committed"]


def test_a_table_an_earlier_version_made_is_brought_up_to_date(engine, outbox, redis):
    """An outbox table without ``seq``, with a row waiting: create_table adds the column,
    and the row is shipped."""
    outbox.table.drop(engine)
    earlier = Table(
        "herald_outbox", MetaData(),
        Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
        Column("key", String(64), nullable=False), Column("topic", String(200), nullable=False),
        Column("envelope", Text, nullable=False), Column("created_at", Float, nullable=False),
        Column("batch", String(80)), Column("sent_at", Float), Column("herald_id", String(41)),
        Column("error", Text), sqlite_autoincrement=True)
    earlier.create(engine)
    with engine.begin() as connection:
        connection.execute(earlier.insert(), [dict(
            outbox_rows.new_row("board.card.created", '{"topic":"board.card.created",'
                                '"title":"waiting","kind":"data","data":{"id":7,"title":"waiting"}}'),
            batch="earlier.1")])
    outbox.create_table(engine)
    with Session(engine) as session:
        session.add(Card(title="after"))
        session.commit()
    assert outbox.relay_once(engine) == 2
    assert [e["data"]["title"] for e in stream(redis)] == ["waiting", "after"]
    assert outbox.counts(engine) == {"pending": 0, "sent": 2, "refused": 0}


def test_a_relay_that_dies_after_publishing_never_publishes_twice(engine, outbox, redis,
                                                                  monkeypatch):
    with Session(engine) as session:
        session.add_all([Card(title=f"card {i}") for i in range(5)])
        session.commit()
    real = outbox_rows.mark_sent

    def dies(*args):
        raise ConnectionError("the relay died before marking its batch sent")

    monkeypatch.setattr(outbox_rows, "mark_sent", dies)
    with pytest.raises(ConnectionError):
        outbox.relay_once(engine)
    assert len(stream(redis)) == 5  # Herald has them ...
    monkeypatch.setattr(outbox_rows, "mark_sent", real)
    assert outbox.relay_once(engine) == 5  # ... the next relay publishes the same batch
    events = stream(redis)
    assert len(events) == 5  # stored once
    with engine.connect() as connection:
        assert outbox.cursor(connection) == events[-1]["id"]
    assert outbox.counts(engine) == {"pending": 0, "sent": 5, "refused": 0}


def write_row(engine, outbox, envelope):
    """Write an outbox row as it is, unchecked (as an older client, or one under rules
    Herald has since made stricter, would have written it), numbered as a commit does."""
    rows = outbox_rows.batched([outbox_rows.new_row(envelope["topic"], json.dumps(envelope))])
    with engine.begin() as connection:
        ids = outbox_rows.write(connection, outbox.table, rows)
        if ids:
            outbox_rows.sequence(connection, outbox.table, ids)


def test_a_row_herald_refuses_is_set_aside_and_the_rest_go_on(engine, outbox, redis):
    with Session(engine) as session:
        session.add(Card(title="fine"))
        session.commit()
        session.add(Card(title="bad owner", owner="x" * 256))
        with pytest.raises(OutboxError, match="user: must be a user id"):
            session.commit()  # refused at the flush, as Herald would refuse it
        session.rollback()
    write_row(engine, outbox, {"topic": "board.card.created", "title": "bad owner",
                               "kind": "data", "data": {"id": 99}, "user": "x" * 256})
    with Session(engine) as session:
        session.add(Card(title="fine too"))
        session.commit()
    assert outbox.relay_once(engine) == 2
    assert [e["data"]["title"] for e in stream(redis)] == ["fine", "fine too"]
    assert outbox.counts(engine) == {"pending": 0, "sent": 2, "refused": 1}
    with engine.connect() as connection:
        error = connection.execute(select(outbox.table.c.error)
                                   .where(outbox.table.c.error.is_not(None))).scalar()
    assert "user" in error


def test_data_that_cannot_be_published_fails_the_flush_naming_it(engine, outbox):
    outbox.track(Untracked, prefix="odd", data=lambda obj: {"when": object()})
    with Session(engine) as session:
        session.add(Untracked())
        with pytest.raises(OutboxError, match=r"odd.created of Untracked \d+ cannot be "
                                              r"published: data: must be JSON-encodable"):
            session.commit()
    with pytest.raises(OutboxError, match="prefix"):
        outbox.track(Untracked, prefix="Not A Prefix")


def test_rows_wait_while_herald_is_away_and_commits_do_not(engine, outbox, redis, client):
    away = HeraldClient(f"http://127.0.0.1:{free_port()}", "hk_x",
                        retry=retry_policy(retries=0), timeout=1)
    outbox.client = away
    with Session(engine) as session:
        session.add(Card(title="while away"))
        session.commit()
    with pytest.raises(Unavailable):
        outbox.relay_once(engine)
    assert outbox.counts(engine)["pending"] == 1
    outbox.client = client  # Herald is back
    assert outbox.relay_once(engine) == 1
    assert [e["data"]["title"] for e in stream(redis)] == ["while away"]


def test_the_background_relay_ships_each_commit_and_recovers(engine, outbox, redis, client):
    away = HeraldClient(f"http://127.0.0.1:{free_port()}", "hk_x",
                        retry=retry_policy(retries=0), timeout=1)
    outbox.client = away
    relay = outbox.start(engine)
    relay.base = relay.cap = 0.05
    with Session(engine) as session:
        session.add(Card(title="one"))
        session.commit()
    wait_until(lambda: relay.failures >= 1, timeout=10, message="a failed round")
    relay.client = client  # Herald is back: the next round ships it
    wait_until(lambda: len(stream(redis)) == 1, timeout=10, message="the first card")
    with Session(engine) as session:
        session.add(Card(title="two"))
        session.commit()  # wakes the relay
    wait_until(lambda: len(stream(redis)) == 2, timeout=10, message="the second card")
    # The relay counts a batch as shipped once it is marked sent, after Herald stored it.
    wait_until(lambda: relay.shipped == 2, timeout=10, message="the second card counted")
    assert relay.last_error is None


def test_a_closed_outbox_tracks_nothing_more(engine, outbox):
    outbox.close()
    with Session(engine) as session:
        session.add(Card(title="after close"))
        session.commit()
    assert outbox.counts(engine) == {"pending": 0, "sent": 0, "refused": 0}


def publishes(redis):
    """How many publish requests Herald took (one idempotency key each)."""
    return len(every_key(redis, ONCE + "*"))


def test_a_commits_rows_go_out_in_one_publish_and_a_backlog_a_hundred_at_a_time(
        engine, outbox, redis):
    with Session(engine) as session:
        session.add_all([Card(title=f"together {i}") for i in range(3)])
        session.commit()
    assert outbox.relay_once(engine) == 3
    assert publishes(redis) == 1
    with Session(engine) as session:  # a backlog of 150 commits of one change each
        for i in range(150):
            session.add(Card(title=f"alone {i}"))
            session.commit()
    assert outbox.relay_once(engine) == 150
    # The first commit's batch as it was, then the rest merged: 100, then 49.
    assert publishes(redis) == 1 + 3
    titles = [e["data"]["title"] for e in stream(redis)]
    assert titles == [f"together {i}" for i in range(3)] + [f"alone {i}" for i in range(150)]


def test_a_relay_that_dies_amid_a_backlog_never_publishes_twice(engine, outbox, redis,
                                                                monkeypatch):
    with Session(engine) as session:
        for i in range(30):
            session.add(Card(title=f"card {i}"))
            session.commit()
    real, calls = outbox_rows.mark_sent, []

    def dies_on_the_second(*args):
        calls.append(1)
        if len(calls) == 2:
            raise ConnectionError("the relay died before marking its batch sent")
        return real(*args)

    monkeypatch.setattr(outbox_rows, "mark_sent", dies_on_the_second)
    with pytest.raises(ConnectionError):
        outbox.relay_once(engine)
    assert outbox.relay_once(engine) == 29
    assert [e["data"]["title"] for e in stream(redis)] == [f"card {i}" for i in range(30)]


def test_on_a_sharded_history_rows_keep_the_ids_that_say_their_shard(sharded, engine, outbox,
                                                                    redis):
    """The Python client passes ids and cursors through as Herald gives them: with
    STREAM_SHARDS=3 a private record's id carries its owner's shard."""
    owner = next(f"user{n}" for n in range(100) if sharded.of_user(f"user{n}").index
                 != sharded.of_topic("board.card.created").index)
    with Session(engine) as session:
        session.add_all([Card(title="Public"), Card(title="Private", owner=owner)])
        session.commit()
    assert outbox.relay_once(engine) == 2
    with engine.connect() as connection:
        ids = [row[0] for row in connection.execute(
            select(outbox.table.c.herald_id).order_by(outbox.table.c.seq, outbox.table.c.id))]
        assert outbox.cursor(connection) == ids[-1]
    shards = [sharded.locate(i)[0] for i in ids]
    assert [s.index for s in shards] == [sharded.of_topic("board.card.created").index,
                                         sharded.of_user(owner).index]
    for shard, entry_id in zip(shards, ids, strict=True):
        at = entry_id.split("-")
        assert redis.xrange(shard.stream, min=f"{at[0]}-{at[1]}", max=f"{at[0]}-{at[1]}")
