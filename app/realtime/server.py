"""``HeraldServer``: python-socketio's Server with a bound on each client's backlog.

Engine.IO keeps one unbounded outgoing queue per connection; a client that
stops reading (a frozen tab, a dead link the kernel has not noticed) would
make it grow without limit. Every packet to a client passes through
``_send_eio_packet``, so that is where the bound is kept: once a client has
``max_queue`` packets waiting, its queue is emptied (freeing the memory at
once) and its connection aborted. The client reconnects with its
``last_id`` and is replayed what it missed.

The writer greenlet of an aborted websocket may still be blocked sending to
the peer: the TCP socket is shut down at once when the connection began as
a websocket (the browser client's way), and otherwise
:class:`WebSocketTimeout` puts a timeout on the socket so that it gives up
and the connection is freed.
"""
import logging
import socket as sockets

import socketio

log = logging.getLogger(__name__)


class HeraldServer(socketio.Server):
    """A Socket.IO server that disconnects clients whose backlog passes ``max_queue``."""

    def __init__(self, max_queue=1000, **options):
        super().__init__(**options)
        self.max_queue = max_queue
        self.slow_disconnects = 0

    def _send_eio_packet(self, eio_sid, eio_pkt):
        socket = self.eio.sockets.get(eio_sid)
        if socket is not None and socket.queue.qsize() >= self.max_queue:
            if not socket.closing and not socket.closed:
                self._shed(socket)
            return
        super()._send_eio_packet(eio_sid, eio_pkt)

    def _shed(self, socket):
        self.slow_disconnects += 1
        log.warning("client %s has %d packets waiting (bound %d): disconnecting it",
                    socket.sid, socket.queue.qsize(), self.max_queue)
        queue = socket.queue
        while not queue.empty():
            queue.get_nowait()
            queue.task_done()
        raw = self._raw_socket(socket.sid)
        socket.close(wait=False, abort=True)
        if raw is not None:
            # Unblocks the writer stuck sending to this peer and ends the connection now.
            try:
                raw.shutdown(sockets.SHUT_RDWR)
            except OSError:
                pass

    def _raw_socket(self, eio_sid):
        """The TCP socket of a connection opened directly as a websocket, else None."""
        websocket = self.environ.get(eio_sid, {}).get("wsgi.websocket")
        handler = getattr(websocket, "handler", None)
        return getattr(handler, "socket", None)


class WebSocketTimeout:
    """WSGI middleware: a send/receive timeout on every websocket's TCP socket.

    Healthy clients answer the server's pings every ``ping_interval`` (25 s),
    so a timeout well above that only ever fires on a peer that stopped
    reading or vanished.
    """

    def __init__(self, app, seconds):
        self.app = app
        self.seconds = seconds

    def __call__(self, environ, start_response):
        websocket = environ.get("wsgi.websocket")
        handler = getattr(websocket, "handler", None)
        if handler is not None and getattr(handler, "socket", None) is not None:
            handler.socket.settimeout(self.seconds)
        return self.app(environ, start_response)
