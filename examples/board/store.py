"""The board's own data: its users and its cards, in SQLite.

This is the host app's business, not Herald's: Herald never sees this
database. Each card carries a ``version`` that goes up by one with every
change, which the browser uses to tell a stale notification from a fresh one.
"""
import sqlite3
import time

from werkzeug.security import check_password_hash, generate_password_hash

COLUMNS = ("todo", "doing", "done")
DEMO_USERS = ("alice", "bob", "carol")
DEMO_PASSWORD = "board-demo"

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (name TEXT PRIMARY KEY, password TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cards (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    column_name TEXT NOT NULL,
    assignee TEXT,
    version INTEGER NOT NULL,
    updated_by TEXT NOT NULL,
    updated_at REAL NOT NULL
);
"""


class CardError(ValueError):
    """A card change was refused; the message names the field."""


class Store:
    """The board's SQLite database (one connection per call: safe across threads)."""

    def __init__(self, path):
        self.path = str(path)
        with self._db() as db:
            db.executescript(SCHEMA)
            for name in DEMO_USERS:
                db.execute("INSERT OR IGNORE INTO users VALUES (?, ?)",
                           (name, generate_password_hash(DEMO_PASSWORD)))

    def _db(self):
        db = sqlite3.connect(self.path, timeout=10)
        db.row_factory = sqlite3.Row
        return db

    def check_password(self, name, password):
        with self._db() as db:
            row = db.execute("SELECT password FROM users WHERE name = ?", (name,)).fetchone()
        return row is not None and check_password_hash(row["password"], password or "")

    def users(self):
        with self._db() as db:
            return [row["name"] for row in db.execute("SELECT name FROM users ORDER BY name")]

    def cards(self):
        with self._db() as db:
            return [_card(row) for row in db.execute("SELECT * FROM cards ORDER BY id")]

    def create(self, fields, user):
        title, column, assignee = self._check(fields, partial=False)
        with self._db() as db:
            cursor = db.execute(
                "INSERT INTO cards (title, column_name, assignee, version, updated_by, updated_at)"
                " VALUES (?, ?, ?, 1, ?, ?)", (title, column, assignee, user, time.time()))
            return _card(db.execute("SELECT * FROM cards WHERE id = ?",
                                    (cursor.lastrowid,)).fetchone())

    def update(self, card_id, fields, user):
        """The card after the change, and the card before it (None when there is no such card)."""
        title, column, assignee = self._check(fields, partial=True)
        with self._db() as db:
            before = db.execute("SELECT * FROM cards WHERE id = ?", (card_id,)).fetchone()
            if before is None:
                return None, None
            db.execute(
                "UPDATE cards SET title = ?, column_name = ?, assignee = ?, version = version + 1,"
                " updated_by = ?, updated_at = ? WHERE id = ?",
                (title or before["title"], column or before["column_name"],
                 assignee if "assignee" in fields else before["assignee"], user, time.time(),
                 card_id))
            after = db.execute("SELECT * FROM cards WHERE id = ?", (card_id,)).fetchone()
            return _card(after), _card(before)

    def delete(self, card_id, user):
        """The card as it was deleted (its version one past the last), or None."""
        with self._db() as db:
            row = db.execute("SELECT * FROM cards WHERE id = ?", (card_id,)).fetchone()
            if row is None:
                return None
            db.execute("DELETE FROM cards WHERE id = ?", (card_id,))
        return dict(_card(row), version=row["version"] + 1, updated_by=user)

    def _check(self, fields, partial):
        if not isinstance(fields, dict):
            raise CardError("body: must be a JSON object")
        title = fields.get("title")
        if title is not None or not partial:
            if not isinstance(title, str) or not 1 <= len(title.strip()) <= 200:
                raise CardError("title: must be 1-200 characters")
            title = title.strip()
        column = fields.get("column")
        if column is not None or not partial:
            column = column or "todo"
            if column not in COLUMNS:
                raise CardError("column: must be one of " + ", ".join(COLUMNS))
        assignee = fields.get("assignee") or None
        if assignee is not None and assignee not in self.users():
            raise CardError(f"assignee: there is no user {assignee!r}")
        return title, column, assignee


def _card(row):
    return {"id": row["id"], "title": row["title"], "column": row["column_name"],
            "assignee": row["assignee"], "version": row["version"],
            "updated_by": row["updated_by"], "updated_at": row["updated_at"]}
