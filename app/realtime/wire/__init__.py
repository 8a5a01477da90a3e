"""The HTTP and websocket transport: the one place Herald depends on other libraries' internals.

Herald's fan-out is fast and its idle connections small because it works
below python-socketio's public API: it writes frames to idle websockets
itself, gives a connection no reader, writer or ping greenlet of its own
(an open websocket is read by a watcher in the hub) and bounds every
connection's queue; and its HTTP server admits connections within limits
(admission.py) with a deadline for every request (request_clock.py). All of
that, and only that, lives in this package, applied to Herald's server
alone (never to other Engine.IO objects in the process).

Each of its modules is in the one map of app/realtime/, file by file, in
docs/architecture.md.

upstream.py names the library versions this was written for (checked at
start-up by :func:`check_versions`) and pins the source of every upstream
function it replaces, overrides or copies (tests/unit/realtime/wire/test_upstream.py).
docs/realtime.md explains each of them and the measurements behind it.
"""
from app.realtime.wire.engine import EngineIO
from app.realtime.wire.handler import bound_call, handler_class
from app.realtime.wire.packets import NotificationPacket
from app.realtime.wire.pings import Wheel
from app.realtime.wire.upstream import check_versions

__all__ = ["EngineIO", "NotificationPacket", "Wheel", "bound_call", "check_versions",
           "handler_class"]
