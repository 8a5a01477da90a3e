"""``HeraldServer``: python-socketio's Server, with Herald's fan-out and a bound on backlogs.

Fan-out (:meth:`HeraldServer.fan_out`): a notification arrives from Redis
already encoded as JSON; it is put into each recipient's Engine.IO queue as
it is, with no JSON work per client. While a client's writer is still busy
with an earlier frame, what follows for that client joins the packet that
waits at the end of its queue: one ``notifications`` frame instead of many,
so a busy client costs fewer frames and system calls, and an idle one gets
each notification at once, alone, as ``notification``.

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
from engineio import exceptions as eio_exceptions
from engineio import packet as eio_packet
from engineio import socket as eio_socket

log = logging.getLogger(__name__)


MERGE_MAX = 50  # notifications one frame may carry


def _poll(self):
    """python-engineio's ``Socket.poll``, the same contract without an exception
    per call: it drains by queue size instead of reading until Empty is raised.

    Each connection's writer calls it once per wake-up, so under fan-out it
    runs once per delivery; installed on ``engineio.socket.Socket`` below
    (python-engineio is pinned in requirements.txt).
    """
    queue = self.queue
    try:
        first = queue.get(timeout=self.server.ping_interval + self.server.ping_timeout)
    except self.server.get_queue_empty_exception():
        raise eio_exceptions.QueueEmpty() from None
    queue.task_done()
    if first is None:
        return []
    packets = [first]
    while queue.qsize():
        packet = queue.get(block=False)
        queue.task_done()
        if packet is None:
            queue.put(None)
            break
        packets.append(packet)
    return packets


eio_socket.Socket.poll = _poll


class NotificationPacket(eio_packet.Packet):
    """An Engine.IO message of notifications for one client; it takes more while it
    waits in the client's queue, and is frozen when the writer encodes it."""

    def __init__(self, namespace, text):  # no super().__init__: its type checks are not needed
        self.packet_type = eio_packet.MESSAGE
        self.data = ""
        self.binary = False
        self.encode_cache = None
        self.prefix = f"42{namespace},"
        self.items = [text]
        self.taken = False

    def encode(self, b64=False):
        if not self.taken:
            self.taken = True
            if len(self.items) == 1:
                body = '["notification",' + self.items[0] + "]"
            else:
                body = '["notifications",[' + ",".join(self.items) + "]]"
            self.encode_cache = self.prefix + body
            self.items = None
        return self.encode_cache


class HeraldServer(socketio.Server):
    """A Socket.IO server that fans notifications out lean and sheds clients too slow to read.

    ``max_queue`` bounds what waits for one client, counted in notifications
    (approximately, to within one frame's MERGE_MAX) and other packets.
    """

    def __init__(self, max_queue=1000, **options):
        super().__init__(**options)
        self.max_queue = max_queue
        self.slow_disconnects = 0
        self.waiting = {}  # eio sid -> its NotificationPacket last put in its queue

    def fan_out(self, namespace, rooms, text, skip=None):
        """Send one notification (``text``: its JSON) to every connection in ``rooms``,
        once each, except the sids in ``skip``."""
        for sid, eio_sid in self.manager.get_participants(namespace, rooms):
            if skip and sid in skip:
                continue
            self.send_notification(namespace, eio_sid, text)

    def send_notification(self, namespace, eio_sid, text):
        socket = self.eio.sockets.get(eio_sid)
        if socket is None or socket.closing or socket.closed:
            return
        queue = socket.queue
        last = self.waiting.get(eio_sid)
        if (last is not None and not last.taken and len(last.items) < MERGE_MAX
                and queue.queue and queue.queue[-1] is last):
            last.items.append(text)
            return
        if queue.qsize() * MERGE_MAX >= self.max_queue:
            self._shed(socket)
            return
        packet = NotificationPacket(namespace, text)
        self.waiting[eio_sid] = packet
        queue.put(packet)  # what Socket.send does, less its per-packet logging call

    def _send_eio_packet(self, eio_sid, eio_pkt):
        socket = self.eio.sockets.get(eio_sid)
        if socket is not None and socket.queue.qsize() >= self.max_queue:
            if not socket.closing and not socket.closed:
                self._shed(socket)
            return
        super()._send_eio_packet(eio_sid, eio_pkt)

    def _handle_eio_disconnect(self, eio_sid, reason):
        self.waiting.pop(eio_sid, None)
        super()._handle_eio_disconnect(eio_sid, reason)

    def _shed(self, socket):
        if socket.closing or socket.closed:
            return
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


def _writer(sock):
    """A ``write(data)`` for one websocket: one ``send``, and ``sendall`` only for a rest.

    gevent's ``sendall`` asks the kernel for the socket's buffer size on every
    call (a ``getsockopt``): one extra system call per frame per client, a
    quarter of the server's time under fan-out. A notification frame nearly
    always fits the socket buffer whole, so one ``send`` does.
    """
    def write(data):
        sent = sock.send(data)
        if sent < len(data):
            sock.sendall(memoryview(data)[sent:])
    return write


class WebSocketTimeout:
    """WSGI middleware for every websocket: a send/receive timeout on its TCP
    socket, and the lean writer above.

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
            websocket.raw_write = _writer(handler.socket)
        return self.app(environ, start_response)
