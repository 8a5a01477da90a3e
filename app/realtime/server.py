"""``HeraldServer``: python-socketio's Server with Herald's policies.

- **Fan-out** (fanout.py): notifications reach their clients as the JSON
  Redis gave, in frames built once.
- **Slow clients are shed**: every connection's outgoing queue is bounded
  (transport/queues.py); a client with ``max_queue`` packets (or that many
  notifications) waiting is cut off: its queue is emptied, freeing the
  memory at once, its connection aborted and its TCP socket shut down, which
  also unblocks a writer stuck sending to it. It reconnects with its
  ``last_id`` and is replayed what it missed.
- **Bad packets are refused**: clients never send binary packets, nor the
  reserved ``connect``/``disconnect`` events, nor events Herald does not
  know; malformed ones make python-socketio raise. Each is answered by
  disconnecting the client with one warning, never a traceback.

The Engine.IO server under it is Herald's own (transport/engine.py), chosen
through python-socketio's ``_engineio_server_class`` hook.
"""
import logging
import socket as sockets

import socketio

from ..metrics import BATCH_BUCKETS, Histogram
from .fanout import FanOut
from .transport import EngineIO

log = logging.getLogger(__name__)

CLIENT_EVENTS = frozenset({"subscribe", "unsubscribe", "read"})  # all a client may emit


class HeraldServer(FanOut, socketio.Server):
    """See the module. ``max_queue``: packets (or notifications) that may wait for one client."""

    def __init__(self, max_queue=1000, **options):
        super().__init__(**options)
        self.max_queue = max_queue
        self.eio.max_queue = max_queue
        self.eio.on_overflow = self.shed
        self.slow_disconnects = 0
        self.refused = 0  # clients disconnected for binary, reserved or malformed packets
        self.deliveries = 0  # notifications handed to clients, one per client
        self.batch_sizes = Histogram(BATCH_BUCKETS)
        self.waiting = {}  # eio sid -> its NotificationPacket last put in its queue

    @property
    def refused_packets(self):
        """Clients refused for bad packets, at either layer (Socket.IO or Engine.IO)."""
        return self.refused + self.eio.refused_packets

    def _engineio_server_class(self):
        return EngineIO

    def _handle_eio_message(self, eio_sid, data):
        """python-socketio's dispatch of a client's message, made hostile-input proof:
        a binary packet (which would announce attachments to buffer) or one
        python-socketio cannot parse disconnects the client."""
        if not isinstance(data, str) or data[:1] in ("5", "6"):
            self._refuse(eio_sid, "a binary packet")
            return
        try:
            super()._handle_eio_message(eio_sid, data)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            self._refuse(eio_sid, f"a malformed packet ({exc.__class__.__name__})")

    def _handle_event(self, eio_sid, namespace, id, data):
        """Only the events clients may send reach the handlers: python-socketio would
        hand a client's ``connect`` or ``disconnect`` *event* to the namespace's
        connect and disconnect handlers, with arguments the client chose. Events
        no handler knows are dropped here, without a greenlet each."""
        if not isinstance(data, list) or not data or not isinstance(data[0], str):
            self._refuse(eio_sid, "an event without a name")
        elif data[0] in self.reserved_events:
            self._refuse(eio_sid, f"a reserved event ({data[0]})")
        elif data[0] in CLIENT_EVENTS:
            super()._handle_event(eio_sid, namespace, id, data)

    def _handle_eio_disconnect(self, eio_sid, reason):
        self.waiting.pop(eio_sid, None)
        super()._handle_eio_disconnect(eio_sid, reason)

    def _refuse(self, eio_sid, what):
        self.refused += 1
        log.warning("client %s sent %s: disconnecting it", eio_sid, what)
        socket = self.eio.sockets.get(eio_sid)
        if socket is not None and not socket.closing and not socket.closed:
            socket.close(wait=False, abort=True)

    def shed(self, socket):
        """Cut off a client too slow to read what is sent to it (see the module)."""
        if socket.closing or socket.closed:
            return
        self.slow_disconnects += 1
        log.warning("client %s has %d packets waiting (bound %d): disconnecting it",
                    socket.sid, socket.queue.qsize(), self.max_queue)
        socket.queue.clear()
        socket.close(wait=False, abort=True)
        writer = getattr(socket, "lean_writer", None)  # a websocket's, see transport/
        if writer is not None:
            try:
                writer.sock.shutdown(sockets.SHUT_RDWR)
            except OSError:
                pass
