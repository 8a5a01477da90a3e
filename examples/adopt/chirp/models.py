"""Chirp's tables: users who follow each other, their posts, private messages, exports.

Times are stored as naive UTC and shown in each user's own zone (times.py).
"""
from datetime import UTC, datetime

import sqlalchemy as sa
from flask_login import UserMixin, current_user
from sqlalchemy.orm import Mapped, mapped_column, relationship
from werkzeug.security import check_password_hash, generate_password_hash

from .extensions import db, herald, login


def utcnow():
    return datetime.now(UTC).replace(tzinfo=None)


followers = sa.Table(
    "followers", db.metadata,
    sa.Column("follower_id", sa.ForeignKey("user.id"), primary_key=True),
    sa.Column("followed_id", sa.ForeignKey("user.id"), primary_key=True))


class User(UserMixin, db.Model):
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(sa.String(120), unique=True)
    display_name: Mapped[str] = mapped_column(sa.String(60))  # users change it at will
    password_hash: Mapped[str] = mapped_column(sa.String(256))
    timezone: Mapped[str] = mapped_column(sa.String(64), default="UTC")
    following = relationship(
        "User", secondary=followers, primaryjoin=lambda: followers.c.follower_id == User.id,
        secondaryjoin=lambda: followers.c.followed_id == User.id, lazy="selectin")

    def set_password(self, password):
        self.password_hash = generate_password_hash(password)

    def check_password(self, password):
        return check_password_hash(self.password_hash, password)

    def follows(self, other):
        return any(user.id == other.id for user in self.following)


class Post(db.Model):
    id: Mapped[int] = mapped_column(primary_key=True)
    body: Mapped[str] = mapped_column(sa.String(280))
    author_id: Mapped[int] = mapped_column(sa.ForeignKey("user.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    author = relationship(User, lazy="joined")


class Message(db.Model):
    id: Mapped[int] = mapped_column(primary_key=True)
    sender_id: Mapped[int] = mapped_column(sa.ForeignKey("user.id"))
    recipient_id: Mapped[int] = mapped_column(sa.ForeignKey("user.id"), index=True)
    body: Mapped[str] = mapped_column(sa.String(1000))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    read: Mapped[bool] = mapped_column(default=False)
    sender = relationship(User, foreign_keys=[sender_id], lazy="joined")
    recipient = relationship(User, foreign_keys=[recipient_id], lazy="joined")


class Export(db.Model):
    """One "export my posts" run: queued, running, done or failed, and its CSV."""
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(sa.ForeignKey("user.id"), index=True)
    status: Mapped[str] = mapped_column(sa.String(16), default="queued")
    rows: Mapped[int] = mapped_column(default=0)
    csv: Mapped[str | None] = mapped_column(sa.Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


# Herald: every committed change of a post is a posts.created|updated|deleted event, and
# refreshes every page showing {{ herald_refresh("timeline") }}; a renamed user too.
herald.track(Post, prefix="posts", refresh="timeline")
herald.track(User, refresh="timeline")


@login.user_loader
def load_user(user_id):
    return db.session.get(User, int(user_id))


@herald.user_loader  # Herald: the primary key, never display_name (users rename themselves)
def herald_user():
    return str(current_user.id) if current_user.is_authenticated else None
