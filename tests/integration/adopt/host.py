"""A small host app for the adoption tests: an app factory, Flask-SQLAlchemy, a model
tracked with ``refresh=``, and views that publish alerts the ways a real app does.

``create_app(config)``, or from the environment for a process of its own
(``HOST_DATABASE_URL``, ``HERALD_URL``, ``HERALD_API_KEY``, ``HERALD_OUTBOX_RELAY``).
"""
import os

from flask import Flask, abort, jsonify, request
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from herald_client.flask import Herald


def create_app(config=None):
    config = config or {
        "SQLALCHEMY_DATABASE_URI": os.environ["HOST_DATABASE_URL"],
        "HERALD_URL": os.environ["HERALD_URL"], "HERALD_API_KEY": os.environ["HERALD_API_KEY"],
        "HERALD_OUTBOX_RELAY": os.environ.get("HERALD_OUTBOX_RELAY", "1") == "1"}
    app = Flask(__name__)
    app.config.update(config)
    db = SQLAlchemy()
    herald = Herald()

    class Post(db.Model):
        __tablename__ = "posts"
        id: Mapped[int] = mapped_column(primary_key=True)
        body: Mapped[str] = mapped_column(String(140))

    herald.track(Post, prefix="posts", data=lambda post: {"body": post.body},
                 title=lambda post, action, changes: f"Post {action}", refresh="timeline")
    db.init_app(app)
    herald.init_app(app)
    with app.app_context():
        db.create_all()

    @app.post("/posts")
    def add_post():
        """A post, and an alert to its follower in the same transaction."""
        post = Post(body=request.get_json()["body"])
        db.session.add(post)
        herald.publish("messages.new", f"New post: {post.body}", user="7", url="/posts")
        if request.args.get("fail"):
            db.session.rollback()
            abort(500)
        db.session.commit()
        return jsonify(id=post.id), 201

    @app.post("/ping")
    def ping():
        """An alert from a view that wrote nothing: a transaction of its own."""
        db.session.get(Post, 1)  # a read: the session's transaction is not the alert's
        herald.publish("ops.ping", "Ping", body=request.get_json()["body"])
        return "", 204

    app.extensions["host"] = {"db": db, "herald": herald, "Post": Post}
    return app
