"""What Herald would refuse is refused where it is made, before the outbox writes it
(issue 35): data with an integer past 64 bits, nested past 250 deep, or with keys that are
not strings used to be committed, and set aside only by the relay, where nobody sees it.
Now a tracked change fails its flush, and ``enqueue`` raises InvalidNotification, naming
the field; nothing is written. (The rules themselves, against Herald's, over a table:
tests/unit/clients/test_envelope_rules.py.)"""
import pytest
from sqlalchemy import Integer, String, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from herald_client import InvalidNotification
from herald_client.sqlalchemy import Outbox, OutboxError
from tests.integration.outbox.support import stream, tables


class Base(DeclarativeBase):
    pass


class Record(Base):
    __tablename__ = "refused_records"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(40))


def nested(levels):
    value = 1
    for _ in range(levels - 1):
        value = {"a": value}
    return value


BAD = {"an integer of 2**70": {"n": 2**70}, "nested 300 deep": nested(300),
       "nested 100,000 deep": nested(100_000), "an int key": {"a": {1: "b"}},
       "a lone surrogate": {"a": "\ud800"}}


@pytest.fixture
def engine(sqlite_url):
    with tables(sqlite_url, Base.metadata) as engine:
        yield engine


@pytest.fixture
def outbox(engine, client):
    outbox = Outbox(client, poll=60.0)  # the relay looks only when woken
    outbox.track(Record, prefix="odd.record",
                 data=lambda record: BAD.get(record.kind, {"kind": record.kind}))
    outbox.table.drop(engine, checkfirst=True)
    outbox.create_table(engine)
    yield outbox
    outbox.close()


def rows(engine, outbox):
    with engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(outbox.table)).scalar()


@pytest.mark.parametrize("kind", list(BAD))
def test_a_tracked_change_herald_would_refuse_fails_its_flush(engine, outbox, redis, kind):
    with Session(engine) as session:
        session.add(Record(kind=kind))
        with pytest.raises(OutboxError, match=r"odd\.record\.created of Record \d+ cannot "
                                              r"be published: data: "):
            session.commit()
        session.rollback()
        assert rows(engine, outbox) == 0
        session.add(Record(kind="fine"))
        session.commit()
    assert outbox.relay_once(engine) == 1
    assert [e["data"]["kind"] for e in stream(redis)] == ["fine"]
    assert outbox.counts(engine)["refused"] == 0


@pytest.mark.parametrize("kind", list(BAD))
def test_an_alert_herald_would_refuse_raises_at_enqueue_and_writes_nothing(engine, outbox,
                                                                         redis, kind):
    alert = {"topic": "ops.x", "title": "X", "data": {"bad": BAD[kind]}}
    with pytest.raises(InvalidNotification, match="data: ") as refused:
        outbox.enqueue(alert, engine=engine)
    assert refused.value.field == "data"
    with Session(engine) as session:
        session.add(Record(kind="fine"))
        with pytest.raises(InvalidNotification):
            outbox.enqueue(alert, session=session)
        session.commit()  # the transaction goes on, without the alert
    assert rows(engine, outbox) == 1
    assert outbox.relay_once(engine) == 1
    assert outbox.counts(engine)["refused"] == 0
