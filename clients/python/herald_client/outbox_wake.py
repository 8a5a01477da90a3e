"""Wake an outbox relay the moment any process commits outbox rows.

A relay in the committing process is woken by the commit itself
(herald_client/sqlalchemy.py). A relay in a process of its own (``flask
herald relay``), or in another web process, would only see the rows at its
next poll: up to ``poll`` seconds (1 s) late. On PostgreSQL the statement
that numbers a commit's rows also sends ``NOTIFY <table name>``
(outbox_rows.sequence), which PostgreSQL delivers when, and only if, the
transaction commits; :class:`Listener` holds a connection of its own that
LISTENs on that channel and calls ``wake`` for each notification. SQLite has
no NOTIFY: :class:`SqliteWatch` reads ``PRAGMA data_version`` on a
connection of its own every LOOK_EVERY seconds, which changes whenever
another connection commits.

It is only a wake-up: the relay still polls, so a notification lost with the
listener's connection delays rows by one poll at most. The connection is
made anew (with a growing wait, up to 30 s) when it breaks. Drivers:
psycopg 3.2 or newer, and psycopg2; with another driver, or another
database, nothing is started and the relay polls. Under gevent, patch
before psycopg is imported (its waits are then cooperative); behind
PgBouncer in transaction pooling LISTEN hears nothing, and the relay polls.
"""
import logging
import selectors
import threading
import time

log = logging.getLogger("herald_client.outbox")
WAIT = 0.5  # seconds a wait for a notification lasts before it checks for stop
LOOK_EVERY = 0.05  # seconds between SQLite's data_version reads


def channel(table):
    """The notification channel of an outbox table: its (schema-qualified) name, cut to
    PostgreSQL's 63 bytes on a character boundary (pg_notify refuses a longer one)."""
    return table.fullname.encode()[:63].decode(errors="ignore")


def watcher(engine):
    """The class that wakes a relay on ``engine`` (:class:`Listener`, :class:`SqliteWatch`),
    or None where the relay only polls."""
    if supported(engine):
        return Listener
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        return SqliteWatch
    return None


def supported(engine):
    """Whether a relay on ``engine`` can LISTEN: PostgreSQL, with psycopg2, or psycopg
    3.2 or newer (``notifies(timeout=...)``)."""
    if engine.dialect.name != "postgresql":
        return False
    if engine.dialect.driver == "psycopg2":
        return True
    if engine.dialect.driver != "psycopg":
        return False
    version = getattr(engine.dialect.loaded_dbapi, "__version__", "0")
    return tuple(int(part) for part in version.split(".")[:2] if part.isdigit()) >= (3, 2)


class Listener:
    """``LISTEN`` on an outbox table's channel in a daemon thread; ``wake()`` for each
    notification, until :meth:`stop`. ``pid``: the listening backend's, once connected."""

    def __init__(self, engine, table, wake):
        self.engine, self.channel, self.wake = engine, channel(table), wake
        self.pid = None
        self.connects = 0  # connections made, the first included
        self.notified = 0  # notifications heard
        self._stop = threading.Event()
        self._connection = None
        self.thread = threading.Thread(target=self.run, name="herald-outbox-listen", daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self, timeout=5.0):
        self._stop.set()
        self.thread.join(timeout)

    def run(self):
        failures = 0
        while not self._stop.is_set():
            try:
                self._connect()
                self.wake()  # rows committed while it was not listening
                while not self._stop.is_set():
                    if self._notified(WAIT):
                        self.notified += 1
                        self.wake()
                    failures = 0  # a whole wait went well: the next failure waits little
            except Exception as exc:  # the database away, the backend killed: listen again
                failures += 1
                delay = min(30.0, 0.5 * 2 ** min(failures - 1, 6))
                log.warning("outbox listener: %s; listening again in %.1f s (the relay polls "
                            "meanwhile)", exc, delay)
                self._stop.wait(delay)
            finally:
                self._close()

    def _connect(self):
        """A DBAPI connection of its own, in autocommit, listening: one the engine makes
        (its connect arguments and events apply), detached from its pool for good."""
        fairy = self.engine.raw_connection()
        fairy.detach()
        connection = self._connection = fairy.dbapi_connection
        connection.rollback()  # a connect event's statement may have begun a transaction
        connection.autocommit = True
        cursor = connection.cursor()
        quoted = '"' + self.channel.replace('"', '""') + '"'
        cursor.execute(f"LISTEN {quoted}")
        cursor.execute("SELECT pg_backend_pid()")
        self.pid = cursor.fetchone()[0]
        cursor.close()
        self.connects += 1

    def _notified(self, timeout):
        """Wait up to ``timeout`` seconds; True when a notification came."""
        connection = self._connection
        if self.engine.dialect.driver == "psycopg":
            return bool(list(connection.notifies(timeout=timeout, stop_after=1)))
        with selectors.DefaultSelector() as selector:  # psycopg2 (poll: no 1,024-fd limit)
            selector.register(connection, selectors.EVENT_READ)
            if not selector.select(timeout):
                return False
        connection.poll()
        came = bool(connection.notifies)
        connection.notifies.clear()
        return came

    def _close(self):
        connection, self._connection, self.pid = self._connection, None, None
        if connection is not None:
            try:
                connection.close()
            except Exception:  # already broken
                pass


class SqliteWatch(Listener):
    """A wake-up on SQLite, which has no NOTIFY: a connection of its own reads ``PRAGMA
    data_version`` every LOOK_EVERY seconds; it changes when another connection commits
    (to any table: the relay then finds the rows, or nothing, with one SELECT)."""

    def _connect(self):
        fairy = self.engine.raw_connection()
        fairy.detach()
        self._connection = fairy.dbapi_connection
        self._version = self._data_version()
        self.connects += 1

    def _data_version(self):
        cursor = self._connection.cursor()
        try:
            cursor.execute("PRAGMA data_version")
            return cursor.fetchone()[0]
        finally:
            cursor.close()

    def _notified(self, timeout):
        deadline = time.monotonic() + timeout
        while not self._stop.is_set():
            version = self._data_version()
            if version != self._version:
                self._version = version
                return True
            if time.monotonic() >= deadline:
                return False
            self._stop.wait(LOOK_EVERY)
        return False
