"""``track(..., refresh=)``: one ``<stream>.refresh`` per transaction and stream, for
column changes and for changes of a collection alone (a many-to-many append writes
only the link table); a table given instead of a class is refused, saying what to do."""
import pytest
from sqlalchemy import Column, ForeignKey, Integer, String, Table, create_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

from herald_client.sqlalchemy import Outbox, OutboxError


class Base(DeclarativeBase):
    pass


shares = Table("shares", Base.metadata,
               Column("note_id", ForeignKey("notes.id"), primary_key=True),
               Column("reader_id", ForeignKey("readers.id"), primary_key=True))


class Reader(Base):
    __tablename__ = "readers"
    id: Mapped[int] = mapped_column(primary_key=True)


class Note(Base):
    __tablename__ = "notes"
    id: Mapped[int] = mapped_column(primary_key=True)
    body: Mapped[str] = mapped_column(String(100))
    board: Mapped[int] = mapped_column(Integer, default=1)
    readers: Mapped[list[Reader]] = relationship(secondary=shares)


@pytest.fixture
def recorded(sqlite_url):
    """An outbox in testing mode tracking Note with a refresh stream per board; what it
    would publish, at each commit."""
    engine = create_engine(sqlite_url)
    Base.metadata.create_all(engine)
    outbox = Outbox(session=Session)
    outbox.testing = True
    outbox.track(Note, refresh=lambda note: f"board.{note.board}")
    sent = []
    outbox.recorders.append(sent)
    yield engine, sent
    outbox.close()
    engine.dispose()


def test_one_refresh_per_transaction_and_stream(recorded):
    engine, sent = recorded
    with Session(engine) as session:
        session.add_all([Note(body="a"), Note(body="b"), Note(body="c", board=2)])
        session.flush()
        session.add(Note(body="d"))
        session.commit()
    assert [(e["topic"], e["data"]) for e in sent] == [
        ("board.1.refresh", {"stream": "board.1"}), ("board.2.refresh", {"stream": "board.2"})]
    with Session(engine) as session:
        session.get(Note, 1).body = "changed"
        session.rollback()
    assert len(sent) == 2  # a rollback: nothing


def test_a_change_of_a_collection_alone_refreshes(recorded):
    engine, sent = recorded
    with Session(engine) as session:
        session.add_all([Note(id=1, body="shared"), Reader(id=7)])
        session.commit()
    sent.clear()
    with Session(engine) as session:
        note = session.get(Note, 1)
        note.readers.append(session.get(Reader, 7))  # writes the shares table only
        session.commit()
    assert [e["topic"] for e in sent] == ["board.1.refresh"]


def test_a_table_is_refused_saying_what_to_track(recorded):
    with pytest.raises(OutboxError, match="not a mapped class.*track that class with refresh="):
        Outbox().track(shares, refresh="board")
