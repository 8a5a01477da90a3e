"""Herald's web process (wsgi.py) with a cheap census port, for bench/churn.py ``--census``.

Run as ``python bench/churn_census.py CENSUS_PORT`` with wsgi.py's environment.
A connection to ``127.0.0.1:CENSUS_PORT`` that sends ``count\\n`` is answered
with one JSON line: the Engine.IO sessions open, the ``Connection`` and
Engine.IO ``Socket`` objects still alive, what the wheels hold, the blocks
Python's allocator has handed out, glibc's heap (mallinfo2: in use and free), pymalloc's arenas and blocks,
and the live objects the cyclic collector tracks, counted by type. Sending
``collect\\n`` first counts as ``count`` does (and names the containers of over
BIG items, with who holds them), then runs a full collection with
``gc.DEBUG_SAVEALL`` and adds what it found, by type (the objects only the
cyclic collector could free; functions among them by where they were defined),
and glibc's heap after it.

Unlike tests/helpers/census_server.py it never calls ``gc.get_referrers`` (one
heap scan per live object: hours with tens of thousands of them alive), so it
can be asked while sessions churn.
"""
# ruff: noqa: I001  (wsgi.py monkey-patches: it is imported before the rest)
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import wsgi  # noqa: E402  (monkey-patches first)

import collections  # noqa: E402
import ctypes  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402

import gevent  # noqa: E402
from engineio.socket import Socket as EngineSocket  # noqa: E402
from gevent.server import StreamServer  # noqa: E402

from app.realtime.wire.connection import Connection  # noqa: E402
from app.services import of as of_app  # noqa: E402


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]


try:
    _libc = ctypes.CDLL("libc.so.6")
    _libc.mallinfo2.restype = _Mallinfo2
except (OSError, AttributeError):
    _libc = None


def heap():
    """glibc's main heap and mmapped blocks, in bytes (None off glibc)."""
    if _libc is None:
        return None
    info = _libc.mallinfo2()
    return {"arena": info.arena, "mmapped": info.hblkhd, "in_use": info.uordblks,
            "free": info.fordblks}


PYMALLOC = {"# arenas allocated current": "arenas", "# arenas highwater mark": "arenas_highwater",
            "# bytes in allocated blocks": "allocated", "# bytes in available blocks": "available"}


def pymalloc():
    """Python's small-object allocator (sys._debugmallocstats, which writes to fd 2):
    its arenas now and at most (1 MiB each), the bytes in blocks handed out, and
    the bytes free in its pools; "unused_pools" are free whole pools, in bytes."""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as out:
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode(errors="replace")
    found = {}
    for line in text.splitlines():
        label, _, value = line.partition("=")
        if label.strip() in PYMALLOC:
            found[PYMALLOC[label.strip()]] = int(value.strip().replace(",", ""))
        elif "unused pools" in line:
            found["unused_pools"] = int(value.strip().replace(",", ""))
    return found


def _name(obj):
    kind = type(obj)
    return f"{kind.__module__}.{kind.__qualname__}"


CONTAINERS = (dict, list, set, frozenset, collections.deque, collections.OrderedDict)
BIG = 2000  # items: a container this long after the sessions are over is named, with its holder


def _holder(container, exclude):
    """Who refers to ``container``: the type, and for a dict, the key it is under
    and that dict's own owner (an instance's ``__dict__``, a module's globals)."""
    held = []
    for referrer in gc.get_referrers(container):
        if referrer is exclude or type(referrer).__name__ == "frame":
            continue
        entry = _name(referrer)
        if isinstance(referrer, dict):
            keys = [k for k, v in referrer.items() if v is container][:2]
            owners = [_name(o) + (f" {o.__name__}" if hasattr(o, "__name__") and
                                  isinstance(getattr(o, "__name__", None), str) else "")
                      for o in gc.get_referrers(referrer)
                      if getattr(o, "__dict__", None) is referrer][:2]
            entry += f" key {keys!r} of {owners or '?'}"
        held.append(entry)
        if len(held) >= 4:
            break
    return held


def big_containers(objects):
    """Containers of at least BIG items: type, length, a few items, and their holder."""
    found = []
    for obj in objects:
        if isinstance(obj, CONTAINERS) and len(obj) >= BIG:
            found.append(obj)
    found.sort(key=len, reverse=True)
    report = []
    for obj in found[:12]:
        items = list(obj.items())[:3] if isinstance(obj, dict) else list(obj)[:3]
        report.append({"type": _name(obj), "len": len(obj), "items": repr(items)[:300],
                       "held_by": _holder(obj, objects)})
    return report


def census(collect):
    engine = of_app(wsgi.app).sio.eio
    sio = of_app(wsgi.app).sio
    objects = gc.get_objects()
    types = collections.Counter(_name(o) for o in objects)
    alive = {"connections": sum(1 for o in objects if isinstance(o, Connection)),
             "engine_sockets": sum(1 for o in objects if isinstance(o, EngineSocket))}
    big = big_containers(objects) if collect else None
    del objects
    answer = {
        "sessions": len(engine.sockets), **alive,
        "wheels": {"pings": len(engine.pings.due), "joins": len(sio.joins.due),
                   **{f"silence_{t}": len(w.due) for t, w in engine._silences.items()}},
        "allocated_blocks": sys.getallocatedblocks(), "heap": heap(), "pymalloc": pymalloc(),
        "types": dict(types),
    }
    if collect:
        answer["big_containers"] = big
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            answer["garbage"] = dict(collections.Counter(_name(o) for o in gc.garbage))
            # A function in a cycle, by where it was defined: whose closure it is.
            answer["garbage_functions"] = dict(collections.Counter(
                f"{o.__module__}.{o.__qualname__} ({o.__code__.co_filename}:{o.__code__.co_firstlineno})"
                for o in gc.garbage if type(o).__name__ == "function"))
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.collect()
        answer["heap_after_collect"] = heap()
        answer["allocated_blocks_after_collect"] = sys.getallocatedblocks()
        answer["pymalloc_after_collect"] = pymalloc()
    return answer


def answer(sock, _address):
    request = b""
    while not request.endswith(b"\n"):
        chunk = sock.recv(64)
        if not chunk:
            break
        request += chunk
    sock.sendall(json.dumps(census(request.strip() == b"collect")).encode() + b"\n")
    sock.close()


if __name__ == "__main__":
    StreamServer(("127.0.0.1", int(sys.argv[1])), answer).start()
    gevent.spawn(gc.collect)  # start-up's cycles are not the run's
    wsgi.serve()
