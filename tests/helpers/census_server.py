"""Herald's web process (wsgi.py) with a census port: what the cyclic collector finds.

Run as ``python tests/helpers/census_server.py CENSUS_PORT`` with wsgi.py's
environment. A connection to ``127.0.0.1:CENSUS_PORT`` is answered with one
JSON line: the Engine.IO sessions open, and, by type, the objects that only
the cyclic garbage collector could free (found with ``gc.DEBUG_SAVEALL``, then
freed). A test drives sessions, waits until they are over, and asks: what
ended connections leave behind must be freed by reference counting alone,
since wsgi.py's collector rarely runs a full collection.
"""
# ruff: noqa: I001  (wsgi.py monkey-patches: it is imported before the rest)
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import wsgi  # noqa: E402  (monkey-patches first)

import collections  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402

import gevent  # noqa: E402
from engineio.socket import Socket as EngineSocket  # noqa: E402
from gevent.server import StreamServer  # noqa: E402

from app.realtime.wire.connection import Connection  # noqa: E402
from app.services import of as of_app  # noqa: E402


GARBAGE = collections.Counter()  # by type, all that every census found so far
WATCHED = (Connection, EngineSocket)


def census():
    """The Engine.IO sessions open; the Connections and Engine.IO sockets still alive
    (an ended one may wait on a wheel for a while: pings, silences); and the
    objects found in reference cycles so far, by type (each census frees them)."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        GARBAGE.update(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()
    engine = of_app(wsgi.app).sio.eio
    alive = [o for o in gc.get_objects() if isinstance(o, WATCHED)]
    held_by = sorted({type(r).__qualname__ for o in alive for r in gc.get_referrers(o)
                      if r is not alive})
    return {"sessions": len(engine.sockets), "alive": len(alive), "held_by": held_by,
            "garbage": dict(GARBAGE)}


def answer(sock, _address):
    sock.sendall(json.dumps(census()).encode() + b"\n")
    sock.close()


if __name__ == "__main__":
    StreamServer(("127.0.0.1", int(sys.argv[1])), answer).start()
    gevent.spawn(gc.collect)  # start-up's cycles are not the test's
    wsgi.serve()
