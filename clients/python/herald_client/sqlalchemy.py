"""Live data from your database, exactly once: a transactional outbox for SQLAlchemy.

    from herald_client import HeraldClient
    from herald_client.sqlalchemy import Outbox

    outbox = Outbox(HeraldClient("http://127.0.0.1:5000", api_key="hk_..."))
    outbox.track(Card, prefix="board.card", data=lambda card: {"title": card.title, ...})
    outbox.create_table(engine)   # or put outbox.table in your metadata: Outbox(..., metadata=)
    outbox.start(engine)          # the relay, in a thread of this process

Publishing after a commit is a dual write: a crash between the two, or Herald
away, loses the change for everyone watching; a publish before a commit that
then rolls back shows a change that never happened. Here a flush that
inserts, updates or deletes a tracked object writes one row per change into
the ``herald_outbox`` table, in the same transaction: a rollback leaves no
row, a commit keeps them all, in commit order: on PostgreSQL the commit's
last statement numbers them (outbox_rows.sequence; commits take turns only
for that statement and their COMMIT, so a transaction holding the turn
waits for no row lock), and SQLite's ids are commit order already. The
relay publishes committed rows in commit order, ``<prefix>.created|updated|deleted`` with ``kind: "data"`` and
``data`` the record (its ``id``, and a ``version`` that rises with every
change of it), each batch under an idempotency key made from its rows: a
relay that dies after publishing and before marking them sent never
publishes them twice, and rows committed by a process that died before its
relay shipped them are shipped by the next relay, in any process
(``flask herald relay`` runs one on its own). While Herald is away the rows
wait; commits do not (nothing of Herald is on the commit's path).

``version``: the data's own when it has one (``data`` returning it, or the
mapper's ``version_id_col``), else the outbox row's id, which rises with
every change of the record in commit order (its row lock holds a second
writer until the first commits). :meth:`Outbox.cursor` is the Herald id a
page renders with its records, for ``Herald.sync(..., {since: cursor})``: every
change the page's data misses is published after it.
"""
import datetime
import decimal
import functools
import json
import logging
import re
import threading
import uuid
import weakref

from sqlalchemy import event, inspect
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Mapper, Session, scoped_session

from . import envelope as envelopes
from . import outbox_relay, outbox_rows
from .errors import InvalidNotification

ACTIONS = ("created", "updated", "deleted")
MAX_TITLE = 200
log = logging.getLogger("herald_client.outbox")
# session.info, per outbox: (the first batch this transaction wrote, its engine)
_ROWS = "herald_outbox_rows"
_CHANGED = "herald_outbox_changed"  # session.info: per outbox, the rows of the flush under way
_REFRESH = "herald_outbox_refresh"  # session.info: per outbox, the flush's refresh streams
_STREAMS = "herald_outbox_streams"  # session.info: per outbox, streams this transaction refreshed
_WRITTEN = "herald_outbox_written"  # session.info: per outbox, rows for recorders at the commit
_FLUSHED = "herald_outbox_flushed"  # session.info: this transaction has flushed (any outbox)
# connection.info: per outbox, the ids of the rows the connection's transaction wrote, to
# be numbered by its commit (_number); dropped by its rollback.
_UNNUMBERED = "herald_outbox_unnumbered"


class OutboxError(ValueError):
    """A tracked change cannot become a notification (the flush fails, naming why)."""


class _Tracked:
    __slots__ = ("prefix", "data", "title", "user", "refresh", "mapper")

    def __init__(self, model, prefix, data, title, user, refresh):
        self.prefix, self.data, self.title, self.user = prefix, data, title, user
        self.refresh = refresh
        self.mapper = inspect(model)


class Outbox:
    """Tracked models' changes, written with them and shipped to Herald by a relay.

    ``client``: a HeraldClient (its API key publishes); ``table_name``; ``metadata``:
    a MetaData to put the table in (your migrations then make it); ``session``: the
    Session class, sessionmaker or scoped_session whose flushes are watched (every
    Session by default); ``poll``: seconds between the relay's looks for rows other
    processes left; ``keep``: seconds sent rows are kept.
    """

    def __init__(self, client=None, *, table_name="herald_outbox", metadata=None, session=Session,
                 poll=1.0, keep=3600.0):
        self.client = client
        self.table = outbox_rows.make_table(table_name, metadata)
        self.poll, self.keep = poll, keep
        self.tracked = {}  # mapper -> _Tracked
        self.relay = None
        self.auto_start = False  # start the relay on the first commit that wrote rows
        # eager(outbox, engine, batch) -> bool: True when it will call ship_now for the
        # commit's rows itself (the Flask extension: once the response is sent).
        self.eager = None
        self._quick = None
        # testing: rows are not written and nothing is sent; what would have been
        # published is handed to the recorders at the commit (herald.record()).
        self.testing = False
        self.recorders = []  # lists that committed envelopes are appended to
        self._lock = threading.RLock()
        self._id = uuid.uuid4().hex
        self._session = session
        self._engines = weakref.WeakSet()  # those whose commits this outbox watches
        self._hooks = [(session, "before_flush", self._before_flush),
                       (session, "after_flush", self._after_flush),
                       (session, "after_commit", self._after_commit),
                       (session, "after_transaction_end", self._forget)]
        for target, name, hook in self._hooks:
            event.listen(target, name, hook)

    # -- what is tracked ---------------------------------------------------------------

    def track(self, model, prefix=None, data=None, title=None, user=None, refresh=None):
        """Publish ``model``'s changes as ``<prefix>.created|updated|deleted``.

        ``data(obj) -> dict``: the record as pages see it (default: every column);
        its ``id`` is the primary key unless it gives one. ``title(obj, action,
        changes) -> str``: the notification's title (``changes``: for an update,
        ``{attribute: [old, new]}``), default "<Model> <id> <action>". ``user(obj) ->
        user id or None``: when it names a user, the change is private to them.
        ``refresh``: a stream name (``"board"``), or ``refresh(obj) -> name or None``:
        a transaction that changes the model publishes ``<stream>.refresh`` once per
        stream, and every page carrying ``{{ herald_refresh(stream) }}`` re-renders
        itself. ``prefix`` may be left out when ``refresh`` is given.
        """
        if prefix is None and refresh is None:
            raise OutboxError("track: give a prefix (record events), refresh (page "
                              "refreshes), or both")
        if prefix is not None:
            _check_prefix(prefix)
        if isinstance(refresh, str):
            _check_prefix(refresh, "refresh")
        mapper = inspect(model, raiseerr=False)
        if not isinstance(mapper, Mapper):
            raise OutboxError(f"track: {model!r} is not a mapped class. A many-to-many "
                              "table's rows change with the collection that holds them: "
                              "track that class with refresh= (a change of its collections "
                              "refreshes pages)")
        if mapper not in self.tracked:
            # The mapper's own events see what the flush really wrote: a cascade's and an
            # orphan's DELETE too, and a delete-and-add of one key as the UPDATE it is.
            for name, action in (("after_insert", "created"), ("after_update", "updated"),
                                 ("after_delete", "deleted")):
                hook = functools.partial(self._changed, action)
                event.listen(model, name, hook, propagate=True)
                self._hooks.append((model, name, hook))
        self.tracked[mapper] = _Tracked(model, prefix, data, title, user, refresh)
        return model

    def _tracking(self, obj):
        mapper = inspect(obj).mapper
        found = self.tracked.get(mapper)
        if found is None:
            for base in mapper.iterate_to_root():  # a subclass of a tracked model
                found = self.tracked.get(base)
                if found is not None:
                    break
        return found

    # -- the flush: rows in the same transaction -------------------------------------------

    def _changed(self, action, _mapper, _connection, target):
        """A tracked object's INSERT, UPDATE or DELETE was just emitted: its row, kept for
        the end of the flush (in the flush's own order)."""
        tracking = self._tracking(target)
        state = inspect(target)
        if tracking is None or state.session is None:
            return
        changes = _changes(state) if action == "updated" else {}
        if action == "updated" and not changes:
            return  # dirty, but no column changed (a collection did): no UPDATE of it
        info = state.session.info
        if tracking.prefix is not None:
            row = self._row(tracking, target, action, changes)
            info.setdefault(_CHANGED, {}).setdefault(self._id, []).append((tracking.mapper, row))
        if tracking.refresh is not None:
            stream = tracking.refresh(target) if callable(tracking.refresh) else tracking.refresh
            if stream:
                _check_prefix(stream, "refresh")
                info.setdefault(_REFRESH, {}).setdefault(self._id, []).append(
                    (tracking.mapper, stream))

    def _before_flush(self, session, _context, _instances):
        """Objects of a model tracked with ``refresh`` whose collections alone changed
        (a many-to-many append writes only the link table, and no UPDATE of theirs):
        their streams are refreshed too. Record events stay for column changes."""
        if not any(t.refresh is not None for t in self.tracked.values()):
            return
        for obj in session.dirty:
            tracking = self._tracking(obj)
            if tracking is None or tracking.refresh is None:
                continue
            state = inspect(obj)
            if any(relation.uselist and state.attrs[relation.key].history.has_changes()
                   for relation in state.mapper.relationships):
                stream = tracking.refresh(obj) if callable(tracking.refresh) else tracking.refresh
                if stream:
                    _check_prefix(stream, "refresh")
                    session.info.setdefault(_REFRESH, {}).setdefault(self._id, []).append(
                        (tracking.mapper, stream))

    def _after_flush(self, session, _context):
        session.info[_FLUSHED] = True
        changed = session.info.get(_CHANGED, {}).pop(self._id, None) or []
        streams = session.info.get(_REFRESH, {}).pop(self._id, None) or []
        refreshed = session.info.setdefault(_STREAMS, {}).setdefault(self._id, set())
        rows = [row for _mapper, row in changed]
        for _mapper, stream in streams:  # once per stream and transaction, after its rows
            if stream not in refreshed:
                refreshed.add(stream)
                rows.append(_refresh_row(stream))
        if not rows:
            return
        mapper = (changed or streams)[0][0]
        self._write(session, lambda: session.connection(bind_arguments={"mapper": mapper}), rows)

    def _write(self, session, connection, rows):
        """Write ``rows`` in the transaction of ``session`` (``connection()``: its
        connection), noted for the commit: numbered by it (PostgreSQL), handed to the
        recorders, shipped. In testing mode only noted."""
        rows = outbox_rows.batched(rows)
        if self.testing or self.recorders:
            session.info.setdefault(_WRITTEN, {}).setdefault(self._id, []).extend(rows)
        if self.testing:
            return
        connection = connection()
        unnumbered = outbox_rows.write(connection, self.table, rows)
        session.info.setdefault(_ROWS, {}).setdefault(self._id, (rows[0]["batch"],
                                                                  connection.engine))
        self._unnumbered(connection, unnumbered)

    def _unnumbered(self, connection, ids):
        if ids:  # the commit numbers them (PostgreSQL: see outbox_rows.write)
            self._watch(connection.engine)
            connection.info.setdefault(_UNNUMBERED, {}).setdefault(self._id, []).extend(ids)

    # -- alerts: a notification written like a change ------------------------------------

    @staticmethod
    def writing(session):
        """True when ``session`` is in a transaction that has written (flushed) or has
        changes to write: an alert made now belongs to it (:meth:`enqueue`). A session
        that only read is not: its transaction may never be committed."""
        session = _current(session)
        if not session.in_transaction():
            return False
        return bool(session.info.get(_FLUSHED) or session.new or session.dirty
                    or session.deleted)

    def enqueue(self, envelope, session=None, engine=None):
        """Publish ``envelope`` (a dict with topic, title, ...) through the outbox.

        With ``session`` (in a transaction): its row is written in that transaction,
        after what the session has pending (flushed first), and published after the
        commit, never for a rollback. Otherwise, with ``engine``: written in a
        transaction of its own, now. Either way nothing here waits for Herald.

        An envelope Herald would refuse raises :class:`~herald_client.InvalidNotification`
        naming the field, before anything is written (herald_client/envelope.py).
        """
        envelope = envelopes.check(envelope, _json_value)
        relayed = outbox_relay.as_relayed(envelope)  # with the version the relay may add
        if relayed is not envelope:
            envelopes.check(relayed, _json_value)
        encoded = json.dumps(envelope, default=_json_value, separators=(",", ":"),
                             ensure_ascii=False, allow_nan=False)
        row = outbox_rows.new_row(envelope["topic"], encoded)
        if session is not None:
            session = _current(session)
            if session.new or session.dirty or session.deleted:
                session.flush()  # the alert comes after the changes made before it
            self._write(session, lambda: session.connection(
                bind_arguments={"clause": self.table.select()}), [row])
            return
        rows = outbox_rows.batched([row])
        if self.testing:
            self._deliver(rows)
            return
        with engine.begin() as connection:
            self._unnumbered(connection, outbox_rows.write(connection, self.table, rows))
        self._deliver(rows)
        self._shipping(engine, rows[0]["batch"])

    def _deliver(self, rows):
        """Committed: what ``rows`` publish, to each recorder."""
        if self.recorders:
            envelopes = [json.loads(row["envelope"]) for row in rows]
            for recorder in list(self.recorders):
                recorder.extend(envelopes)

    # -- the commit: number the rows, then wake the relay ------------------------------

    def _watch(self, engine):
        """Hear the commits and rollbacks of ``engine``'s connections (once): the commit
        that ends a transaction which wrote rows numbers them, whoever commits it (the
        Session, or the code that owns a connection the Session joined)."""
        if engine in self._engines:
            return
        with self._lock:
            if engine not in self._engines:
                for name, hook in self._engine_hooks():
                    event.listen(engine, name, hook)
                self._engines.add(engine)

    def _engine_hooks(self):
        # A two-phase commit is not numbered (no statement after its PREPARE): its rows
        # are adopted by the relay (outbox_rows.adopt), and its ids forgotten here.
        return (("commit", self._number), ("rollback", self._dropped),
                ("commit_twophase", self._dropped), ("rollback_twophase", self._dropped))

    def _number(self, connection):
        """The transaction commits now: its outbox rows take their place in commit order
        (its last statement; see outbox_rows.sequence). An error fails the commit, and
        the connection is dropped: SQLAlchemy would otherwise pool it with the failed
        transaction still open, its row locks (and perhaps the turn) held."""
        ids = connection.info.get(_UNNUMBERED, {}).pop(self._id, None)
        if not ids:
            return
        try:
            outbox_rows.sequence(connection, self.table, ids)
        except BaseException:
            connection.invalidate()
            raise

    def _dropped(self, connection, *_xid):
        connection.info.get(_UNNUMBERED, {}).pop(self._id, None)

    def _row(self, tracking, obj, action, changes):
        state = inspect(obj)
        record = dict(tracking.data(obj)) if tracking.data else _columns(state)
        key = state.identity if state.identity is not None else \
            state.mapper.primary_key_from_instance(obj)
        record.setdefault("id", key[0] if len(key) == 1 else list(key))
        version_col = state.mapper.version_id_col
        if "version" not in record and version_col is not None:
            record["version"] = getattr(obj, state.mapper.get_property_by_column(version_col).key)
        title = tracking.title(obj, action, changes) if tracking.title else \
            f"{type(obj).__name__} {record['id']} {action}"
        envelope = {"topic": f"{tracking.prefix}.{action}", "title": _title(title), "kind": "data",
                    "data": record}
        owner = envelopes.user_id(tracking.user(obj)) if tracking.user else None
        if owner:
            envelope["user"] = owner
        # Checked as Herald will check it, with the largest version the relay may add.
        try:
            envelopes.check(outbox_relay.as_relayed(envelope), _json_value)
        except InvalidNotification as exc:
            hint = "; give track() a data function that keeps less" if "bytes" in str(exc) else ""
            raise OutboxError(f"{tracking.prefix}.{action} of {type(obj).__name__} "
                              f"{record['id']} cannot be published: {exc}{hint}") from None
        encoded = json.dumps(envelope, default=_json_value, separators=(",", ":"),
                             ensure_ascii=False, allow_nan=False)
        return outbox_rows.new_row(envelope["topic"], encoded)

    def _after_commit(self, session):
        written = session.info.get(_WRITTEN, {}).pop(self._id, None)
        if written:
            self._deliver(written)
        first = session.info.get(_ROWS, {}).pop(self._id, None)  # each outbox its own
        if first is not None:
            self._shipping(first[1], first[0])

    def _shipping(self, engine, first):
        """Rows whose first batch is ``first`` were just committed: ship them."""
        if self.auto_start and (self.relay is None or not self.relay.running):
            self.start(engine)  # the first time, or after its thread was lost (a fork)
        if self.eager is not None and self.eager(self, engine, first):
            return  # shipped by ship_now, later in this thread
        if self.relay is not None:
            self.relay.wake()

    def ship_now(self, engine, batch):
        """Publish the commit's first batch from this thread, now, when it is the first
        one pending (else the relay's turn comes first), then wake the relay for the
        rest. For a thread with nothing else to do (a request whose response is sent):
        a publish from the relay's thread would wait for the GIL behind it. Never while
        the relay finds Herald away, and never raises: the relay is the one that retries."""
        try:
            if self.relay is None or not self.relay.failures:
                outbox_relay.ship_first(self._eager_client(), engine, self.table, batch)
        except Exception as exc:  # Herald or the database away: the relay takes over
            log.info("outbox: shipping at once failed (%s); the relay will", exc)
        finally:
            if self.relay is not None:
                self.relay.wake()

    def _eager_client(self):
        """The client, without retries and with a short timeout: ship_now only tries once."""
        if self._quick is None or self._quick[0] is not self.client:
            self._quick = (self.client, self.client.variant(retries=0, timeout=2.0))
        return self._quick[1]

    def _forget(self, session, transaction):
        """The transaction ended (committed or not): what it noted goes. A savepoint's
        end is not the transaction's: what the outer one wrote before it still counts."""
        if transaction.parent is None:
            for key in (_ROWS, _CHANGED, _REFRESH, _STREAMS, _WRITTEN):
                session.info.get(key, {}).pop(self._id, None)
            session.info.pop(_FLUSHED, None)

    # -- the table and the relay -----------------------------------------------------------

    def create_table(self, engine):
        """Make the outbox table if not there yet, or bring one an earlier version made
        up to date (its ``seq`` column). With the table in your app's metadata, your
        migrations make it instead (``flask db migrate`` renders it whole)."""
        self.table.create(engine, checkfirst=True)
        with engine.begin() as connection:
            outbox_rows.upgrade(connection, self.table)  # a table made before its seq

    def start(self, engine):
        """Start the relay in a thread of this process (once): it ships what is pending
        now (rows a process that died left), then each commit's rows."""
        if self.client is None:
            raise RuntimeError("Outbox.start: give the Outbox a HeraldClient first")
        with self._lock:
            if self.relay is None or not self.relay.running:
                self.relay = outbox_relay.Relay(self.client, engine, self.table, poll=self.poll,
                                                keep=self.keep).start()
            return self.relay

    def stop(self, timeout=10.0):
        """Stop the relay (rows not yet shipped wait for the next one)."""
        if self.relay is not None:
            self.relay.stop(timeout)
            self.relay = None

    def close(self):
        """Stop the relay and watch no session any more (tracking ends). Two outboxes
        tracking one model into one table would write each change twice: close the
        first before making another (tests, scripts)."""
        self.stop()
        for target, name, hook in self._hooks:
            if event.contains(target, name, hook):
                event.remove(target, name, hook)
        for engine in list(self._engines):
            for name, hook in self._engine_hooks():
                if event.contains(engine, name, hook):
                    event.remove(engine, name, hook)
        self._engines = weakref.WeakSet()

    def relay_once(self, engine):
        """Ship what is pending now, in order; returns how many rows were published."""
        outbox_rows.adopt(engine, self.table)  # rows a commit left unnumbered, if any
        return outbox_relay.relay_once(self.client, engine, self.table)

    def cursor(self, bind):
        """The Herald id to render with a page's records (read them after this call, in
        the same request): ``Herald.sync(collection, prefix, {since: cursor})`` then
        misses nothing. ``bind``: a Session, Connection or Engine. None before any row
        was shipped (the page then fetches its records once subscribed)."""
        if isinstance(bind, Connection):
            return outbox_rows.cursor(bind, self.table)
        if isinstance(bind, Engine):
            with bind.connect() as connection:
                return outbox_rows.cursor(connection, self.table)
        return outbox_rows.cursor(bind.connection(), self.table)  # a Session, or scoped_session

    def prune(self, engine):
        """Delete rows sent more than ``keep`` seconds ago (the newest sent stays: the
        cursor); the relay does it every minute. Returns how many went."""
        return outbox_rows.prune(engine, self.table, self.keep)

    def counts(self, engine):
        """``{"pending", "sent", "refused"}``: rows waiting, shipped (and kept), set aside."""
        with engine.connect() as connection:
            return outbox_rows.counts(connection, self.table)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _check_prefix(prefix, what="prefix"):
    if not isinstance(prefix, str) or not re.fullmatch(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*", prefix) \
            or len(prefix) > 180:
        raise OutboxError(f"{what}: {prefix!r} must be dot-separated segments of [a-z0-9_-] "
                          "(at most 180 characters), e.g. board.card")


def _current(session):
    """The Session itself: a scoped_session's current one (Flask-SQLAlchemy's db.session)."""
    return session() if isinstance(session, scoped_session) else session


def _refresh_row(stream):
    """The row of one page refresh: ``<stream>.refresh``, a data event."""
    envelope = {"topic": f"{stream}.refresh", "title": f"{stream} changed", "kind": "data",
                "data": {"stream": stream}}
    return outbox_rows.new_row(envelope["topic"], json.dumps(envelope, separators=(",", ":")))


def _columns(state):
    return {attr.key: getattr(state.obj(), attr.key) for attr in state.mapper.column_attrs}


def _changes(state):
    """``{attribute: [old, new]}`` of the columns this flush changed."""
    found = {}
    for attr in state.mapper.column_attrs:
        history = state.attrs[attr.key].history
        if history.has_changes():
            old = history.deleted[0] if history.deleted else None
            new = history.added[0] if history.added else None
            if old != new:
                found[attr.key] = [old, new]
    return found


def _title(text):
    text = " ".join(_CONTROL.sub(" ", str(text)).split())  # no control characters or runs of spaces
    return (text[:MAX_TITLE - 1] + "…") if len(text) > MAX_TITLE else (text or "changed")


def _json_value(value):
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")
