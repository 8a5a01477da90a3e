"""The board's own data: its users and its cards, as SQLAlchemy 2.x models (Flask-SQLAlchemy).

This is the host app's business, not Herald's: Herald never reads this
database. Herald's part is one extra table, ``herald_outbox``, written by
the same commits as the cards (see live.py). The tables keep the names and
columns the board had in raw sqlite3, so an earlier ``board.db`` still opens.

``Card.version`` is the mapper's ``version_id_col``: SQLAlchemy raises it by
one with every UPDATE (and checks it, so a change made from a stale copy of
the row fails instead of overwriting). The browser uses it to tell a stale
notification from a fresh one, and the edit-conflict notice to show "v3".
"""
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import Float, ForeignKey, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

COLUMNS = ("todo", "doing", "done")
COLUMN_NAMES = {"todo": "To do", "doing": "Doing", "done": "Done"}


class Base(DeclarativeBase):
    pass


db = SQLAlchemy(model_class=Base)


class User(db.Model):
    """One of the board's own users (Herald has no account for them: it trusts the
    connection tokens this app signs)."""
    __tablename__ = "users"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    password_hash: Mapped[str] = mapped_column("password", String(256))


class Card(db.Model):
    __tablename__ = "cards"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    title: Mapped[str] = mapped_column(String(200))
    column: Mapped[str] = mapped_column("column_name", String(16), default="todo")
    assignee: Mapped[str | None] = mapped_column(String(64), ForeignKey("users.name"))
    version: Mapped[int] = mapped_column(Integer)
    updated_by: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[float] = mapped_column(Float)  # seconds since 1970, as the page shows it

    __mapper_args__ = {"version_id_col": version}  # 1 on INSERT, +1 on every UPDATE
    # SQLite's AUTOINCREMENT: a card's id is never reused. Without it, a card added after
    # the newest was deleted took its id, and pages that had seen that id deleted (at
    # version 1) took the new card's "created" (also version 1) for a stale event.
    # (A board.db made before keeps its table as it was.)
    __table_args__ = {"sqlite_autoincrement": True}

    def to_json(self):
        """The card as pages see it: the API's answers, the rendered board, and the
        ``data`` of its Herald events (live.py) are all this."""
        return {"id": self.id, "title": self.title, "column": self.column,
                "assignee": self.assignee, "version": self.version,
                "updated_by": self.updated_by, "updated_at": self.updated_at}
