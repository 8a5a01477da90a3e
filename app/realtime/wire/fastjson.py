"""A ``json``-compatible module backed by orjson, for python-socketio's packets.

python-socketio encodes each emitted packet once for all its recipients;
orjson makes that one encoding several times faster than the standard library.
A packet from a client is read by Herald's strict rule (app/stream/strict_json.py),
as every ingress is: too deep, a lone surrogate or NaN is a ValueError (the
client is refused, app/realtime/server.py), never a RecursionError from the
standard library, which escaped as a traceback. Integers past 64 bits are
read exactly: an event's checks then refuse them by name. What orjson cannot
write (integers past 64 bits in our own data) falls back to the standard library.
"""
import json

import orjson

from app.stream import strict_json


def dumps(obj, **_ignored):
    """Compact JSON text; python-socketio's ``separators`` argument is what orjson does anyway."""
    try:
        return orjson.dumps(obj).decode()
    except TypeError:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def loads(text, **_ignored):
    return strict_json.loads(text, keep_big_ints=True)
