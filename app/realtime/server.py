"""``HeraldServer``: python-socketio's Server with Herald's policies.

- **Fan-out** (wire/fanout.py, the server's ``fanout``): notifications reach
  their clients as the JSON Redis gave, in frames built once; it keeps its own
  figures (``fanout.deliveries``, ``fanout.batch_sizes``).
- **Slow clients are shed**: every connection's outgoing queue is bounded
  (wire/queues.py); a client with ``max_queue`` packets (or that many
  notifications) waiting is cut off: its queue is emptied, freeing the
  memory at once, its connection aborted and its TCP socket shut down, which
  also unblocks a writer stuck sending to it. It reconnects with its
  ``last_id`` and is replayed what it missed.
- **Bad packets are refused**: clients never send binary packets, nor the
  reserved ``connect``/``disconnect`` events, nor events Herald does not
  know; malformed ones make python-socketio raise. Each is answered by
  disconnecting the client with one warning, never a traceback.
- **A budget per connection** (token_bucket.py): past ``message_rate`` Socket.IO
  messages a second (bursts of ``message_burst``) a client is cut off before
  its message costs anything, and counted.
- **A deadline to join**: an Engine.IO connection that has not joined the
  ``/notifications`` namespace ``join_timeout`` seconds after it opened is
  closed (a socket that only answers pings holds a slot for nothing).

The Engine.IO server under it is Herald's own (wire/engine.py), chosen
through python-socketio's ``_engineio_server_class`` hook and built by
python-socketio with the options it does not know: here ``max_queue``,
``allowed_hosts`` and ``on_overflow`` (this server's ``shed``).
"""
import logging
import socket as sockets

import socketio

from app.realtime.rooms import NAMESPACE
from app.realtime.token_bucket import TokenBucket
from app.realtime.wire import EngineIO, Wheel
from app.realtime.wire.fanout import FanOut

log = logging.getLogger(__name__)

CLIENT_EVENTS = frozenset({"subscribe", "unsubscribe", "read", "presence"})  # all a client may emit


class HeraldServer(socketio.Server):
    """See the module. ``max_queue``: packets (or notifications) that may wait for one
    client; ``allowed_hosts``: the Host names its Engine.IO server answers (ALLOWED_HOSTS,
    None: any); ``options``: python-socketio's and python-engineio's."""

    def __init__(self, max_queue=1000, message_rate=20, message_burst=100, join_timeout=10,
                 allowed_hosts=None, **options):
        # python-socketio builds the EngineIO (engine.py) with the options it does not know.
        super().__init__(max_queue=max_queue, on_overflow=self.shed, allowed_hosts=allowed_hosts,
                         **options)
        self.fanout = FanOut(self.manager, self.eio, max_queue, self.shed)
        self.join_timeout = join_timeout
        self.joins = Wheel(self._check_joined)
        self.join_timeouts = 0
        self.message_rate, self.message_burst = message_rate, message_burst
        self.budgets = {}  # eio sid -> TokenBucket
        self.abusive_disconnects = 0
        self.slow_disconnects = 0
        self.refused = 0  # clients disconnected for binary, reserved or malformed packets

    def fan_out_many(self, namespace, batch):
        """What the relay hands on, to the clients that should have it (``fanout``)."""
        self.fanout.fan_out_many(namespace, batch)

    def send_page(self, namespace, sid, texts):
        """A replay's page to one client (``fanout``)."""
        self.fanout.send_page(namespace, sid, texts)

    @property
    def refused_packets(self):
        """Clients refused for bad packets, at either layer (Socket.IO or Engine.IO)."""
        return self.refused + self.eio.refused_packets

    def _engineio_server_class(self):
        return EngineIO

    def open_socket(self, namespace, sid):
        """The Engine.IO socket of ``sid`` (a connection to ``namespace``) while it is
        open, else None."""
        eio_sid = self.manager.eio_sid_from_sid(sid, namespace)
        socket = self.eio.sockets.get(eio_sid) if eio_sid is not None else None
        return None if socket is None or socket.closing or socket.closed else socket

    def _handle_eio_message(self, eio_sid, data):
        """python-socketio's dispatch of a client's message, made hostile-input proof:
        a binary packet (which would announce attachments to buffer) or one
        python-socketio cannot parse disconnects the client."""
        socket = self.eio.sockets.get(eio_sid)
        if socket is None or socket.closing or socket.closed:
            return  # cut off already: what it sent after that is not read
        budget = self.budgets.get(eio_sid)
        if budget is None:
            budget = self.budgets[eio_sid] = TokenBucket(self.message_rate, self.message_burst)
        if not budget.take():
            self.abusive_disconnects += 1
            self.cut_off(eio_sid, f"it sent more than {self.message_rate} messages a second")
            return
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

    def _handle_eio_connect(self, eio_sid, environ):
        super()._handle_eio_connect(eio_sid, environ)
        if self.eio.lean:  # served under gevent (the wheel is a greenlet)
            self.joins.schedule(eio_sid, self.join_timeout)

    def _check_joined(self, eio_sid):
        socket = self.eio.sockets.get(eio_sid)
        if socket is None or socket.closing or socket.closed:
            return
        if self.manager.sid_from_eio_sid(eio_sid, NAMESPACE) is None:
            self.join_timeouts += 1
            self.cut_off(eio_sid, f"it did not join {NAMESPACE} within {self.join_timeout} s")

    def _handle_eio_disconnect(self, eio_sid, reason):
        self.fanout.forget(eio_sid)
        self.budgets.pop(eio_sid, None)
        super()._handle_eio_disconnect(eio_sid, reason)

    def _refuse(self, eio_sid, what):
        self.refused += 1
        self.cut_off(eio_sid, f"it sent {what}")

    def cut_off(self, eio_sid, why):
        """Close a client's Engine.IO connection at once, saying ``why`` in the log."""
        log.warning("disconnecting client %s: %s", eio_sid, why)
        socket = self.eio.sockets.get(eio_sid)
        if socket is not None and not socket.closing and not socket.closed:
            socket.close(wait=False, abort=True)

    def shed(self, socket):
        """Cut off a client too slow to read what is sent to it (see the module)."""
        if socket.closing or socket.closed:
            return
        self.slow_disconnects += 1
        log.warning("client %s has %d packets waiting (bound %d): disconnecting it",
                    socket.sid, socket.queue.qsize(), self.eio.max_queue)
        socket.queue.clear()
        socket.close(wait=False, abort=True)
        writer = getattr(socket, "lean_writer", None)  # a websocket's, see wire/
        if writer is not None:
            try:
                writer.sock.shutdown(sockets.SHUT_RDWR)
            except OSError:
                pass
