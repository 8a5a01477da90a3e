"""A small host app for the outbox's Flask tests: Flask-SQLAlchemy, items, and Herald.

``create_app(config)``, or from the environment for ``flask --app`` in a process of
its own: ``HOST_DATABASE_URL``, ``HERALD_URL``, ``HERALD_API_KEY``,
``HERALD_OUTBOX_RELAY`` ("0": this process does not relay).
"""
import os

from flask import Flask, jsonify, request
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import Integer, String
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

    class Item(db.Model):
        __tablename__ = "items"
        id: Mapped[int] = mapped_column(Integer, primary_key=True)
        name: Mapped[str] = mapped_column(String(100))

    db.init_app(app)
    herald.init_app(app)
    herald.track(Item, prefix="shop.item", data=lambda item: {"name": item.name},
                 title=lambda item, action, changes: f"{item.name} {action}")
    with app.app_context():
        db.create_all()
        herald.outbox.create_table(db.engine)

    @app.post("/items")
    def add_item():
        item = Item(name=request.get_json()["name"])
        db.session.add(item)
        db.session.commit()
        return jsonify(id=item.id), 201

    @app.get("/page")
    def page():
        cursor = herald.cursor()  # before the records
        return jsonify(cursor=cursor, items=[i.name for i in db.session.query(Item).order_by(Item.id)])

    app.extensions["host"] = {"db": db, "herald": herald, "Item": Item}
    return app
