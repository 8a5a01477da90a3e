"""Engine.IO over a websocket, without a writer greenlet per connection.

python-engineio serves a websocket with ``Socket._websocket_handler``: a
reading loop in the connection's greenlet, plus a writer greenlet that waits
on the connection's queue for its whole life. Each suspended greenlet keeps
a copy of its stack: at thousands of idle connections that is most of the
server's memory per connection.

:class:`LeanWebSocket` is the websocket driver in Herald's Engine.IO server's
own driver table (engine.py), in place of python-engineio's gevent one. For
a connection opened directly as a websocket (the browser client's way) it
runs :func:`serve` instead of python-engineio's handler: a
:class:`~.connection.Connection` reading it from the hub once the handler
has handed its socket over (no reader greenlet at all), else the same
reading loop as python-engineio's; and a :class:`~.queues.DrainingQueue`
whose drainer exists only while something is queued; the connection's :class:`~.writer.LeanWriter` is left
on the Engine.IO socket so that the fan-out loop can write to it directly.
A connection upgraded from long-polling keeps python-engineio's handler.

Malformed Engine.IO packets are refused here, where Herald reads them: the
connection is closed with one warning (python-engineio's handler would end
with a traceback).
"""
import logging

from engineio import exceptions as eio_exceptions
from engineio import packet as eio_packet
from engineio.async_drivers.gevent import WebSocketWSGI

from app.realtime.wire.connection import MALFORMED, Connection
from app.realtime.wire.queues import DrainingQueue
from app.realtime.wire.writer import LeanWriter

log = logging.getLogger("herald.transport")


class LeanWebSocket(WebSocketWSGI):
    """python-engineio's gevent websocket driver, serving new websockets leanly.

    Built by python-engineio as ``driver(socket._websocket_handler, server)``;
    ``app`` is then that bound handler, whose socket is ``app.__self__``.
    """

    def __call__(self, environ, start_response):
        if "wsgi.websocket" not in environ:
            raise RuntimeError("websocket requests must be served by "
                               "app.realtime.wire.WebSocketHandler")
        self._sock = environ["wsgi.websocket"]  # gevent-websocket's WebSocket
        self.environ = environ
        socket = self.app.__self__
        if socket.connected:  # an upgrade from long-polling
            return self._upstream(socket)
        return serve(socket, self)

    def _upstream(self, socket):
        try:
            return self.app(self)
        except MALFORMED as exc:
            log.warning("%s: malformed packet during the websocket upgrade (%s); closing",
                        socket.sid, exc.__class__.__name__)
            socket.close(wait=False, abort=True)
            return []

    def close(self):
        return self._sock.close()

    def send(self, message):
        return self._sock.send(message)

    def wait(self):
        return self._sock.receive()


def serve(socket, ws):
    """Serve ``ws`` until it closes (python-engineio's loop, less its writer
    greenlet; see the module): from the hub, by a :class:`~.connection.Connection`,
    when the handler can hand its socket over (it returns at once then), else
    by reading and dispatching its packets in this greenlet."""
    socket.connected = True
    socket.upgraded = True
    # Herald's WebSocketHandler (handler.py) made the websocket's raw_write a
    # LeanWriter's write; the fan-out loop writes through that writer.
    writer = getattr(ws._sock.raw_write, "__self__", None)
    socket.lean_writer = writer if isinstance(writer, LeanWriter) else None
    server = socket.server
    pending = []
    while socket.queue.qsize():  # the OPEN packet, and anything sent since
        pending.append(socket.queue.get_nowait())
        socket.queue.task_done()
    handler = ws._sock.handler  # gevent-websocket's WebSocket knows its pywsgi handler
    hand_over = getattr(handler, "hand_over", None)
    if socket.lean_writer is not None and hand_over is not None:
        release = hand_over()
        if release is not None:
            connection = Connection(socket, handler.socket, socket.lean_writer, release,
                                    server.silences(handler.timeout), handler.timeout)
            socket.queue = DrainingQueue(pending, connection, server)
            connection.start()
            return []
    socket.queue = DrainingQueue(pending, ws, server)
    limit = server.max_http_buffer_size
    while True:
        try:
            data = ws.wait()
        except Exception:  # a reset, a timeout, a refused frame: the connection is over
            break
        if data is None:  # closed by the client
            break
        if len(data) > limit:
            log.info("%s: packet is too large; closing", socket.sid)
            break
        try:
            pkt = eio_packet.Packet(encoded_packet=data)
        except MALFORMED as exc:
            server.refused_packets += 1
            log.warning("%s: malformed Engine.IO packet (%s); closing", socket.sid,
                        exc.__class__.__name__)
            break
        try:
            socket.receive(pkt)
        except eio_exceptions.UnknownPacketError:
            pass
        except eio_exceptions.SocketIsClosedError:
            break
        except Exception:
            log.exception("%s: receive error", socket.sid)
            break
        if socket.closed:  # cut off (a flood, a bad packet): read nothing more of it
            break
    socket.queue.put(None)  # the drainer closes the websocket after what is queued
    drainer = socket.queue.drainer
    if drainer is not None:
        drainer.join(timeout=5)
    socket.close(wait=False, abort=True, reason=server.reason.TRANSPORT_CLOSE)
    socket.queue.close()  # its reference to ws, and so to socket: a cycle
    return []
