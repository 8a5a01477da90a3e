"""The board's changes: sign-in checks, and cards made, changed and deleted (in db.session).

Each function changes the session and leaves the commit to the view, so
that one commit holds the card and the Herald outbox row its change wrote
(live.py): nothing here knows Herald. A change that changes nothing (a
title saved as it was) writes nothing: no new version, no event.
"""
import time

from sqlalchemy import select
from werkzeug.security import check_password_hash, generate_password_hash

from .database import write
from .models import COLUMNS, Card, User, db

DEMO_USERS = ("alice", "bob", "carol")
DEMO_PASSWORD = "board-demo"


class CardError(ValueError):
    """A card change was refused; the message names the field."""


def add_demo_users():
    """alice, bob and carol, each with the demo password, unless they are there."""
    known = set(db.session.scalars(select(User.name)))
    for name in DEMO_USERS:
        if name not in known:
            db.session.add(User(name=name, password_hash=generate_password_hash(DEMO_PASSWORD)))
    db.session.commit()


def check_password(name, password):
    user = db.session.get(User, name or "")
    return user is not None and check_password_hash(user.password_hash, password or "")


def users():
    return list(db.session.scalars(select(User.name).order_by(User.name)))


def cards():
    return [card.to_json() for card in db.session.scalars(select(Card).order_by(Card.id))]


def create(fields, user):
    write()
    title, column, assignee = _check(fields, partial=False)
    card = Card(title=title, column=column, assignee=assignee, updated_by=user,
                updated_at=time.time())
    db.session.add(card)
    return card


def find_for_change(card_id):
    """The card, its row locked for this transaction (None when there is none)."""
    write()
    return db.session.get(Card, card_id, with_for_update=True)


def update(card, fields, user):
    """Set what ``fields`` changes; True when something changed."""
    title, column, assignee = _check(fields, partial=True)
    wanted = {"title": title, "column": column}
    if "assignee" in fields:
        wanted["assignee"] = assignee
    changed = False
    for name, value in wanted.items():
        if value is not None or name == "assignee":
            if getattr(card, name) != value:
                setattr(card, name, value)
                changed = True
    if changed:
        card.updated_by, card.updated_at = user, time.time()
    return changed


def delete(card, user):
    # Who deleted it goes into the deleted event's data (the outbox reads the object
    # as it is in the session when the DELETE is flushed).
    card.updated_by, card.updated_at = user, time.time()
    db.session.delete(card)


def _check(fields, partial):
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
    if assignee is not None and (not isinstance(assignee, str) or
                                 db.session.get(User, assignee) is None):
        raise CardError(f"assignee: there is no user {assignee!r}")
    return title, column, assignee
