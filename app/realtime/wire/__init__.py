"""The websocket transport: the one place Herald depends on other libraries' internals.

Herald's fan-out is fast and its idle connections small because it works
below python-socketio's public API: it writes frames to idle websockets
itself, gives a connection no reader, writer or ping greenlet of its own
(an open websocket is read by a watcher in the hub) and bounds every
connection's queue. All
of that, and only that, lives in this package, applied to Herald's server
alone (never to other Engine.IO objects in the process):

- engine.py: ``EngineIO``, python-engineio's Server as Herald's Socket.IO
  server builds it (bounded queues, its own websocket driver, one ping wheel);
- websocket.py: ``LeanWebSocket``, serving a websocket without a writer
  greenlet, and refusing malformed Engine.IO packets where they are read;
- connection.py: ``Connection``, a websocket read from the hub once pywsgi's
  greenlet has handed it over (no greenlet while it is idle);
- queues.py, pings.py, packets.py: the bounded and draining queues, the
  ping wheel, the growing notifications packet;
- handler.py, writer.py, reader.py: gevent-websocket's handler for pywsgi,
  its socket's writer (which the fan-out loop writes to directly) and reader;
- admission.py: the web server, admitting connections within limits and
  keeping handed-over sockets open past their handler.

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
