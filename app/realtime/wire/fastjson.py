"""A ``json``-compatible module backed by orjson, for python-socketio's packets.

python-socketio encodes each emitted packet once for all its recipients;
orjson makes that one encoding several times faster than the standard library.
What orjson refuses (integers past 64 bits) falls back to the standard
library, so a client's odd but valid JSON is still read, never a crash.
"""
import json

import orjson


def dumps(obj, **_ignored):
    """Compact JSON text; python-socketio's ``separators`` argument is what orjson does anyway."""
    try:
        return orjson.dumps(obj).decode()
    except TypeError:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def loads(text, **_ignored):
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)  # valid JSON orjson does not take, or a clear ValueError
