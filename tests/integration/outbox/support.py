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
