"""The outbox table and the statements the outbox runs on it (SQLite and PostgreSQL).

One row per change of a tracked record, written in the host app's own
transaction (herald_client/sqlalchemy.py), shipped to Herald later by the
relay (herald_client/outbox_relay.py):

- ``id``: given at the flush; a record's rows get rising ids in commit order
  (the record's row lock holds a second writer until the first commits), so it
  is the record's ``version`` when its data has none;
- ``seq``: the commit's place in commit order, given at the commit itself
  (:func:`sequence`); rows are published in ``(seq, id)`` order, and a row
  without one (its transaction not committed yet) is not published;
- ``key``: a random idempotency key made with the row, so that a database
  made anew (ids from 1 again) never reuses a key Herald still remembers;
- ``topic``, ``envelope``: what to publish (JSON text, without ``version``);
- ``batch``: the publish the row goes out in, whose idempotency key it is:
  set with the row, in the commit (:func:`batched`), or by a relay before it
  publishes (:func:`claim`); a relay that dies after publishing and before
  marking the rows sent leaves the same batch, with the same key, for the
  next relay (in any process), and Herald stores it once;
- ``sent_at``, ``herald_id``: when it was confirmed, and the id Herald gave it
  (the newest is the cursor a page renders with its data: :func:`cursor`);
- ``error``: why Herald refused the row for good (never sent; kept for a look).
"""
import time
import uuid
from collections import namedtuple
from itertools import takewhile

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    and_,
    bindparam,
    case,
    delete,
    func,
    inspect,
    select,
    text,
    update,
)

from . import outbox_wake

BATCH_MOST = 100  # rows per publish: Herald's batch endpoint takes at most 100
BATCH_BYTES = 56 * 1024  # and a request of at most 64 KiB: the envelopes' JSON, with room
# The PostgreSQL advisory lock keys: commits of outbox rows, and relays claiming a batch.
WRITERS_LOCK = 0x4865726C  # "Herl"
CLAIM_LOCK = 0x4865726D


Claimed = namedtuple("Claimed", "id key topic envelope batch")


def make_table(name="herald_outbox", metadata=None):
    """The outbox table, in ``metadata`` (a MetaData of its own by default; give your
    app's, and its migrations make the table: Alembic's autogenerate renders it whole).

    Nothing beside the table: on PostgreSQL a commit takes its ``seq`` from the
    sequence of the ``id`` column's BIGSERIAL (:func:`sequence`), which every
    ``CREATE TABLE`` makes, so a migration needs no sequence of its own."""
    metadata = metadata if metadata is not None else MetaData()
    if name in metadata.tables:  # the app's metadata has it already (a second Outbox, a reload)
        return metadata.tables[name]
    return Table(
        name, metadata,
        # BigInteger on PostgreSQL; on SQLite an INTEGER PRIMARY KEY, AUTOINCREMENT so
        # that an id is never given twice (a deleted newest row's id would be).
        Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
               autoincrement=True),
        Column("key", String(64), nullable=False),
        Column("topic", String(200), nullable=False),
        Column("envelope", Text, nullable=False),
        Column("created_at", Float, nullable=False),
        Column("batch", String(80)),
        Column("sent_at", Float),
        Column("herald_id", String(41)),
        Column("error", Text),
        Column("seq", BigInteger),
        Index(f"ix_{name}_pending", "sent_at", "seq", "id"),
        Index(f"ix_{name}_seq", "seq"),
        sqlite_autoincrement=True,
    )


def new_row(topic, envelope_json):
    return {"key": "outbox-" + uuid.uuid4().hex, "topic": topic, "envelope": envelope_json,
            "created_at": time.time()}


def batched(rows):
    """Give the rows one flush writes their batches (``batch``), as they are inserted:
    up to BATCH_MOST rows and BATCH_BYTES each, keyed by the first row's key. The
    relay then publishes a commit's rows with no write before it (:func:`claim`)."""
    start, size = 0, 0
    for index, row in enumerate(rows):
        size += len(row["envelope"].encode()) + 32
        if index > start and (index - start == BATCH_MOST or size > BATCH_BYTES):
            _name(rows[start:index])
            start, size = index, len(row["envelope"].encode()) + 32
    if rows:
        _name(rows[start:])
    return rows


def _name(chunk):
    key = f"{chunk[0]['key']}.{len(chunk)}"
    for row in chunk:
        row["batch"] = key


def write(connection, table, rows):
    """Insert a flush's rows; the ids the commit must number (:func:`sequence`), [] when
    none. Only PostgreSQL needs it. SQLite has one writer at a time, which holds its
    write lock from its first write to its commit, so its ids rise in commit order
    already: rows are written numbered (``seq`` 0) and go out in id order, with no
    statement at the commit (other databases are treated so too, see docs/outbox.md)."""
    if connection.dialect.name != "postgresql":
        connection.execute(table.insert(), [dict(row, seq=0) for row in rows])
        return []
    return list(connection.execute(table.insert().returning(table.c.id), rows).scalars())


def sequence(connection, table, ids=None):
    """Give rows ``ids`` (this transaction's: :func:`write`), or with None every committed
    row still without one (:func:`adopt`), their place in commit order; how many rows.
    Run by the commit itself, as the transaction's last statement (sqlalchemy.py).

    On PostgreSQL the number is the next of the ``id`` column's own sequence (so above
    every id and ``seq`` given before, and nothing to migrate beside the table). A
    sequence hands out numbers in the order asked, not the order committed, so
    commits of outbox rows take turns from this statement to their COMMIT (a
    transaction-level advisory lock, taken only when there are rows to
    number): a transaction holding it waits for nothing but its own commit, so it
    does not deadlock with one waiting for it, whatever rows either has locked. One
    statement, one round trip; the CTEs make the lock come before ``nextval``. It
    also NOTIFYs the table's channel, delivered at the commit, which wakes relays in
    other processes (herald_client/outbox_wake.py). Only
    the transaction's own rows, by primary key: no predicate over rows another
    transaction writes (SERIALIZABLE hosts). Elsewhere rows are numbered 0 (:func:`write`).
    """
    if connection.dialect.name != "postgresql":
        return connection.execute(update(table).where(table.c.seq.is_(None)).values(seq=0)).rowcount
    parameters = {"key": WRITERS_LOCK, "table": _qualified(connection, table),
                  "channel": outbox_wake.channel(table)}
    which = "seq IS NULL"
    if ids is not None:
        which, parameters["ids"] = "id = ANY(CAST(:ids AS bigint[]))", list(ids)
    return connection.execute(text(
        "WITH turn AS MATERIALIZED (SELECT pg_advisory_xact_lock(:key)), "
        "place AS MATERIALIZED (SELECT nextval(pg_get_serial_sequence(:table, 'id')) AS n, "
        "pg_notify(:channel, '') FROM turn) "
        f"UPDATE {_qualified(connection, table)} SET seq = (SELECT n FROM place) WHERE {which}"),
        parameters).rowcount


def _qualified(connection, table, suffix=""):
    """``table``'s name (with ``suffix``: its sequence's), quoted, with its schema."""
    quote = connection.dialect.identifier_preparer.quote
    return (f"{quote(table.schema)}." if table.schema else "") + quote(table.name + suffix)


def adopt(engine, table):
    """Number committed rows that have no ``seq`` (a commit the outbox did not see: its
    Outbox closed meanwhile, a two-phase or a raw DBAPI commit; rows of a table made
    before ``seq`` existed), so they are published; how many. Uncommitted rows are not
    visible here, so they are never taken."""
    with engine.connect() as connection:
        if connection.execute(select(table.c.id).where(table.c.seq.is_(None)).limit(1)).first() \
                is None:
            return 0
    with engine.begin() as connection:
        return sequence(connection, table)


def upgrade(connection, table):
    """Give an outbox table made before ``seq`` existed its column and index, and its
    rows their place (before any commit made after); True when it did. On PostgreSQL
    a table whose ``seq`` came from an earlier version's own sequence has the ``id``
    sequence moved past its highest ``seq``, so that new commits still come after."""
    if "seq" in {column["name"] for column in
                 inspect(connection).get_columns(table.name, schema=table.schema)}:
        _past_highest_seq(connection, table)
        return False
    connection.execute(text(f"ALTER TABLE {_qualified(connection, table)} ADD COLUMN seq BIGINT"))
    for index in table.indexes:
        if [column.name for column in index.columns] == ["seq"]:
            index.create(connection)
    sequence(connection, table)  # its rows, before any commit made from now on
    return True


def _past_highest_seq(connection, table):
    if connection.dialect.name != "postgresql":
        return
    numbers = connection.execute(text("SELECT pg_get_serial_sequence(:table, 'id')"),
                                 {"table": _qualified(connection, table)}).scalar()
    highest = connection.execute(select(func.max(table.c.seq))).scalar()
    if numbers and highest and highest >= connection.execute(
            text(f"SELECT last_value FROM {numbers}")).scalar():
        connection.execute(text("SELECT setval(CAST(:numbers AS regclass), :value)"),
                           {"numbers": numbers, "value": highest + 1})


def _lock_claims(connection, table):
    """Hold batch changes (claims, merges, marks) to one relay at a time, until this
    transaction ends."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": CLAIM_LOCK})
    else:  # SQLite: an UPDATE (of no row) takes its one write lock now, for the whole step
        connection.execute(update(table).where(table.c.id == -1).values(batch=table.c.batch))


def _pending(connection, table, most):
    columns = (table.c.id, table.c.key, table.c.topic, table.c.envelope, table.c.batch)
    return [Claimed(*row) for row in connection.execute(
        select(*columns).where(and_(table.c.sent_at.is_(None), table.c.error.is_(None),
                                    table.c.seq.is_not(None)))
        .order_by(table.c.seq, table.c.id).limit(most))]


def first(engine, table):
    """The first pending batch's rows (a read), [] when nothing is pending."""
    with engine.connect() as connection:
        pending = _pending(connection, table, BATCH_MOST)
    return _first_batch(pending) if pending and pending[0].batch is not None else []


def _first_batch(pending):
    return [row for row in pending if row.batch == pending[0].batch]


def claim(engine, table, most=BATCH_MOST):
    """The rows of the batch to publish now, in commit order ([] when nothing is pending).

    The invariant that makes it exactly once: only the *first* pending batch is
    ever published, always under its own key, so a batch a relay published and
    died before marking is published again as it was, and Herald stores it once.
    A commit's rows come with their batch (:func:`batched`), so the usual case is
    a read and nothing more. Rows behind the first batch were never published:
    several small batches there are merged into one (a write, under the lock),
    so that a backlog goes out 100 rows a request. Rows without a batch (let go
    after a refusal) are claimed under a new key, under the lock, before publishing.
    """
    with engine.connect() as connection:  # and what is behind the first batch: merge it?
        pending = _pending(connection, table, 2 * most)
    if pending and pending[0].batch is None:
        with engine.begin() as connection:
            _lock_claims(connection, table)
            pending = _pending(connection, table, most)
            if pending and pending[0].batch is None:
                fresh = _within(list(takewhile(lambda row: row.batch is None, pending)),
                                BATCH_BYTES)
                batch = f"{fresh[0].key}.{len(fresh)}.{uuid.uuid4().hex[:8]}"
                connection.execute(update(table).where(table.c.id.in_([r.id for r in fresh]))
                                   .values(batch=batch))
                return [row._replace(batch=batch) for row in fresh]
    if not pending:
        return []
    first = _first_batch(pending)
    behind = pending[len(first):]
    if len({row.batch for row in behind}) > 1:
        _merge_behind(engine, table, most)
    return first


def _merge_behind(engine, table, most):
    """Put the rows behind the first pending batch (up to ``most`` and BATCH_BYTES) into
    one batch, under a new key. Under the lock, and marks take it too, so the first
    batch cannot change meanwhile: what is merged was never published."""
    with engine.begin() as connection:
        _lock_claims(connection, table)
        pending = _pending(connection, table, 2 * most)
        if not pending or pending[0].batch is None:
            return
        behind = _within(pending[len(_first_batch(pending)):][:most], BATCH_BYTES)
        if len({row.batch for row in behind}) < 2:
            return
        batch = f"{behind[0].key}.{len(behind)}.{uuid.uuid4().hex[:8]}"
        connection.execute(update(table).where(table.c.id.in_([r.id for r in behind]))
                           .values(batch=batch))


def _within(rows, most_bytes):
    """The first of ``rows`` whose envelopes fit in ``most_bytes`` together (one at least)."""
    size = 0
    for count, row in enumerate(rows):
        size += len(row.envelope.encode()) + 32  # the id spliced in as "version", commas, brackets
        if size > most_bytes and count:
            return rows[:count]
    return rows


def mark_sent(engine, table, rows, replies):
    """Record that Herald stored ``rows`` (``replies``: its ``{"id", "ts"}`` for each)."""
    now = time.time()
    with engine.begin() as connection:
        _lock_claims(connection, table)  # never beside a merge (see claim)
        connection.execute(
            update(table).where(table.c.id == bindparam("row_id"))
            .values(sent_at=now, herald_id=bindparam("stream_id")),
            [{"row_id": row.id, "stream_id": reply["id"]} for row, reply in zip(rows, replies,
                                                                                strict=True)])


def refuse(engine, table, rows, index, message, whole=False):
    """Herald refused the batch for row ``rows[index]`` (None: for no row it named):
    that row is set aside with ``message`` and the others are let go, to be claimed
    again (a new batch, so a new key: nothing of the refused batch was stored). With
    ``whole``, every row of the batch is set aside. Under the lock, and only while the
    rows are still that batch, unsent: a relay that had the same refusal and already
    let them go (and shipped them under a new key) is not undone."""
    still = and_(table.c.batch == rows[0].batch, table.c.sent_at.is_(None),
                 table.c.error.is_(None))
    ids = [row.id for row in rows]
    with engine.begin() as connection:
        _lock_claims(connection, table)
        if whole:
            connection.execute(update(table).where(table.c.id.in_(ids)).where(still)
                               .values(error=message[:2000]))
            return
        if index is not None:
            connection.execute(update(table).where(table.c.id == rows[index].id).where(still)
                               .values(error=message[:2000]))
        connection.execute(update(table).where(table.c.id.in_(ids)).where(still)
                           .values(batch=None))


def cursor(connection, table):
    """The Herald id of the newest row shipped, or None: every change committed after
    this read is published to Herald after that id (rows are shipped in commit order)."""
    return connection.execute(
        select(table.c.herald_id).where(table.c.herald_id.is_not(None))
        .order_by(table.c.seq.desc(), table.c.id.desc()).limit(1)).scalar()


def counts(connection, table):
    """``{"pending", "sent", "refused"}``: how many rows are in each state."""
    pending = func.sum(_case(table.c.sent_at.is_(None) & table.c.error.is_(None)))
    refused = func.sum(_case(table.c.error.is_not(None)))
    sent = func.sum(_case(table.c.sent_at.is_not(None)))
    row = connection.execute(select(pending, sent, refused)).one()
    return {"pending": int(row[0] or 0), "sent": int(row[1] or 0), "refused": int(row[2] or 0)}


def _case(condition):
    return case((condition, 1), else_=0)


def prune(engine, table, older_than):
    """Delete rows sent more than ``older_than`` seconds ago, all but the newest sent
    (the cursor). Returns how many went."""
    with engine.begin() as connection:
        newest = connection.execute(
            select(table.c.id).where(table.c.sent_at.is_not(None))
            .order_by(table.c.seq.desc(), table.c.id.desc()).limit(1)).scalar()
        if newest is None:
            return 0
        return connection.execute(
            delete(table).where(and_(table.c.sent_at < time.time() - older_than,
                                     table.c.id != newest))).rowcount
