"""What the outbox's tests share: Herald's stream as published envelopes, and a host
database's tables made fresh for a test."""
import contextlib

import orjson
from sqlalchemy import create_engine

from app.stream.keys import STREAM


def stream(redis):
    """Every envelope in Herald's stream, oldest first, with its ``id``."""
    return [dict(orjson.loads(fields[b"envelope"]), id=entry_id.decode())
            for entry_id, fields in redis.xrange(STREAM)]


@contextlib.contextmanager
def tables(database_url, metadata):
    """An engine on ``database_url`` with ``metadata``'s tables made anew; disposed after."""
    engine = create_engine(database_url)
    metadata.drop_all(engine)
    metadata.create_all(engine)
    try:
        yield engine
    finally:
        engine.dispose()


@contextlib.contextmanager
def hosts(create_app, database_url):
    """``make(server, api_key, relay=True, **config)``: a host app made by ``create_app``
    on ``database_url`` (its extensions in ``app.extensions["host"]``: ``db`` and
    ``herald``), with its Herald extension; each one's relay stopped and database
    engine closed after."""
    made = []

    def make(server, api_key, relay=True, **config):
        app = create_app({"SQLALCHEMY_DATABASE_URI": database_url, "HERALD_URL": server.url,
                          "HERALD_API_KEY": api_key, "HERALD_OUTBOX_RELAY": relay, **config})
        made.append(app)
        return app, app.extensions["host"]["herald"]

    try:
        yield make
    finally:
        for app in made:
            close_host(app)


def close_host(app):
    """Stop a host app's outbox relay and close its database engine."""
    app.extensions["host"]["herald"].outbox.close()
    with app.app_context():
        app.extensions["host"]["db"].engine.dispose()
