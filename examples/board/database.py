"""Which database the board uses, and how SQLite is set up for two writers.

``BOARD_DATABASE_URL`` (any SQLAlchemy URL: ``postgresql+psycopg://…``)
wins; otherwise ``BOARD_DB``, a SQLite file path (``board.db``).

On SQLite two threads write: the views, and Herald's outbox relay (it marks
rows sent). So every connection gets WAL (readers never wait for the
writer) and a busy timeout (a writer waits its turn instead of failing at
once), and a view that reads then writes begins with ``BEGIN IMMEDIATE``
(:func:`write`): with a plain deferred BEGIN, a read transaction that then
writes fails outright with "database is locked" whenever another writer
committed since its read, a wait that no busy timeout covers. PostgreSQL
needs none of this: the views lock the card's row (``with_for_update``).
"""
from sqlalchemy import event

from .models import db

BUSY_TIMEOUT_MS = 10_000


def database_url(config):
    return config.get("BOARD_DATABASE_URL") or f"sqlite:///{config['BOARD_DB']}"


def set_up(app):
    """Point Flask-SQLAlchemy at the board's database, make the tables, and tune SQLite."""
    app.config["SQLALCHEMY_DATABASE_URI"] = database_url(app.config)
    db.init_app(app)
    with app.app_context():
        if db.engine.dialect.name == "sqlite":
            event.listen(db.engine, "connect", _sqlite_connect)
            event.listen(db.engine, "begin", _sqlite_begin)
        db.create_all()


def write():
    """Begin this request's transaction as one that will write (call it before any read)."""
    db.session.connection(execution_options={"board_write": True})


def _sqlite_connect(dbapi_connection, _record):
    dbapi_connection.isolation_level = None  # BEGIN is ours to say (_sqlite_begin)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection):
    immediate = connection.get_execution_options().get("board_write")
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
