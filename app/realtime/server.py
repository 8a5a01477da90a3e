"""``HeraldServer``: python-socketio's Server, with Herald's fan-out and a bound on backlogs.

Fan-out (:meth:`HeraldServer.fan_out`): a notification arrives from Redis
already encoded as JSON; its websocket frame is built once, and written
straight from the fan-out loop to every recipient whose connection is idle
(nothing queued, nothing being written): one non-blocking ``send`` each, no
greenlet woken, no JSON work per client. Only when a client is busy does the
notification go through its Engine.IO queue, and there it joins the packet
that waits at the end of the queue: one ``notifications`` frame instead of
many, so a busy client costs fewer frames and system calls, and an idle one
gets each notification at once, alone, as ``notification``.

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
import struct
import types

import gevent
import socketio
from engineio import exceptions as eio_exceptions
from engineio import packet as eio_packet
from engineio import socket as eio_socket

from ..metrics import BATCH_BUCKETS, Histogram

log = logging.getLogger(__name__)


MERGE_MAX = 50  # notifications one frame may carry
CLIENT_EVENTS = frozenset({"subscribe", "unsubscribe", "read"})  # all a client may emit


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

UNKNOWN_PACKET = len(eio_packet.packet_names)  # a type no handler knows: ignored
_decode = eio_packet.Packet.decode


def _decode_or_unknown(self, encoded_packet):
    """python-engineio's ``Packet.decode``, except that a malformed packet (an empty
    frame, a type that is not a digit) decodes as an unknown type instead of
    raising: the websocket reader decodes outside its error handling, so the
    exception would end the connection with a traceback; an unknown packet is
    ignored (installed on ``engineio.packet.Packet`` below)."""
    try:
        _decode(self, encoded_packet)
    except (ValueError, IndexError, TypeError):
        self.packet_type = UNKNOWN_PACKET
        self.data = None


eio_packet.Packet.decode = _decode_or_unknown


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
            self.encode_cache = self.prefix + event_body(self.items)
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
        self.refused_packets = 0  # clients disconnected for malformed or binary packets
        self.deliveries = 0  # notifications handed to clients, one per client
        self.batch_sizes = Histogram(BATCH_BUCKETS)
        self.waiting = {}  # eio sid -> its NotificationPacket last put in its queue

    def fan_out(self, namespace, rooms, text, skip=None):
        """Send one notification (``text``: its JSON) to every connection in ``rooms``,
        once each, except the sids in ``skip``."""
        frame = None
        sent = 0
        for sid, eio_sid in self.manager.get_participants(namespace, rooms):
            if skip and sid in skip:
                continue
            socket = self.eio.sockets.get(eio_sid)
            if socket is None or socket.closing or socket.closed:
                continue
            sent += 1
            writer = self._lean_writer(socket)
            if writer is not None and not writer.busy and not socket.queue.qsize():
                if frame is None:
                    frame = notifications_frame(namespace, [text])
                writer.write_now(frame)
            else:
                self.send_notification(namespace, eio_sid, text, socket)
        self.deliveries += sent

    def fan_out_many(self, namespace, batch):
        """:meth:`fan_out` for a batch of ``(rooms, text, skip)`` in order: an idle
        client gets one frame with all of the batch's notifications that are for
        it, built once for every client that gets the same ones."""
        self.batch_sizes.observe(len(batch))
        if len(batch) == 1:
            self.fan_out(namespace, *batch[0])
            return
        wanted = {}  # eio sid -> indexes into batch, in order
        for index, (rooms, _text, skip) in enumerate(batch):
            for sid, eio_sid in self.manager.get_participants(namespace, rooms):
                if skip and sid in skip:
                    continue
                indexes = wanted.get(eio_sid)
                if indexes is None:
                    wanted[eio_sid] = [index]
                else:
                    indexes.append(index)
        frames = {}
        for eio_sid, indexes in wanted.items():
            socket = self.eio.sockets.get(eio_sid)
            if socket is None or socket.closing or socket.closed:
                continue
            self.deliveries += len(indexes)
            writer = self._lean_writer(socket)
            if writer is not None and not writer.busy and not socket.queue.qsize():
                key = tuple(indexes)
                frame = frames.get(key)
                if frame is None:
                    frame = frames[key] = notifications_frame(namespace, [batch[i][1] for i in indexes])
                writer.write_now(frame)
            else:
                for index in indexes:
                    self.send_notification(namespace, eio_sid, batch[index][1], socket)

    def _lean_writer(self, socket):
        """The :class:`LeanWriter` of a connection opened directly as a websocket, else None."""
        try:
            return socket.lean_writer
        except AttributeError:
            if not socket.upgraded:
                return None  # still connecting, or long-polling (maybe upgraded later)
            websocket = self.environ.get(socket.sid, {}).get("wsgi.websocket")
            # The websocket has __slots__: its writer is found through raw_write.
            writer = getattr(getattr(websocket, "raw_write", None), "__self__", None)
            usable = isinstance(writer, LeanWriter) and writer.raw is not None
            socket.lean_writer = writer if usable else None
            return socket.lean_writer

    def send_notification(self, namespace, eio_sid, text, socket=None):
        """Queue one notification for a client, merged into the packet waiting for it if any."""
        if socket is None:
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

    def _handle_eio_message(self, eio_sid, data):
        """python-socketio's dispatch of a client's message, made hostile-input proof.

        Herald's clients never send binary packets; a binary event announces
        attachments the server would buffer, so any binary packet is refused.
        Malformed packets (an event with no name, JSON that is not a list)
        make python-socketio raise; either way the client is disconnected
        with one warning, rather than a traceback per packet.
        """
        if not isinstance(data, str) or data[:1] in ("5", "6"):
            self._refuse(eio_sid, "a binary packet")
            return
        try:
            super()._handle_eio_message(eio_sid, data)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            self._refuse(eio_sid, f"a malformed packet ({exc.__class__.__name__})")

    def _handle_event(self, eio_sid, namespace, id, data):
        """Only the events clients may send reach the handlers.

        python-socketio would hand a client's ``connect`` or ``disconnect``
        *event* to the namespace's connect and disconnect handlers, with
        whatever arguments the client chose; such a client is refused.
        Events no handler knows are dropped here, without a greenlet each.
        """
        if not isinstance(data, list) or not data or not isinstance(data[0], str):
            self._refuse(eio_sid, "an event without a name")
        elif data[0] in self.reserved_events:
            self._refuse(eio_sid, f"a reserved event ({data[0]})")
        elif data[0] in CLIENT_EVENTS:
            super()._handle_event(eio_sid, namespace, id, data)

    def _refuse(self, eio_sid, what):
        self.refused_packets += 1
        log.warning("client %s sent %s: disconnecting it", eio_sid, what)
        socket = self.eio.sockets.get(eio_sid)
        if socket is not None and not socket.closing and not socket.closed:
            socket.close(wait=False, abort=True)

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


def notifications_frame(namespace, texts):
    """The websocket frame of a Socket.IO event carrying notifications (their JSON
    ``texts``): ``notification`` for one, ``notifications`` with a list for more."""
    return websocket_frame(f"42{namespace},{event_body(texts)}".encode())


def event_body(texts):
    """``["notification", N]`` for one notification's JSON, else ``["notifications", [N, ...]]``."""
    if len(texts) == 1:
        return '["notification",' + texts[0] + "]"
    return '["notifications",[' + ",".join(texts) + "]]"


def websocket_frame(payload):
    """One unmasked, final websocket text frame (RFC 6455, 5.2) around ``payload`` (UTF-8)."""
    size = len(payload)
    if size < 126:
        return bytes((0x81, size)) + payload
    if size < 65536:
        return struct.pack("!BBH", 0x81, 126, size) + payload
    return struct.pack("!BBQ", 0x81, 127, size) + payload


class LeanWriter:
    """Everything written to one websocket's TCP socket goes through here, so
    that the fan-out loop can tell when it may write a frame itself.

    ``write`` is the websocket's ``raw_write``, used by python-engineio's
    writer greenlet: one ``send``, and ``sendall`` only for a rest (gevent's
    ``sendall`` asks the kernel for the socket's buffer size on every call, a
    ``getsockopt`` per frame per client: a quarter of the server's time under
    fan-out before). ``write_now`` is the fan-out loop's: a non-blocking
    ``send`` of a whole frame; whatever the kernel does not take at once is
    finished by a short-lived greenlet, and until it has, the connection is
    ``busy`` and everything else waits its turn in the queue.
    """

    __slots__ = ("sock", "raw", "busy", "finisher")

    def __init__(self, sock):
        self.sock = sock
        self.raw = getattr(sock, "_sock", None)  # the non-blocking socket under gevent's
        self.busy = False
        self.finisher = None

    def write(self, data):
        if self.finisher is not None:
            self.finisher.join()
        self.busy = True
        try:
            sent = self.sock.send(data)
            if sent < len(data):
                self.sock.sendall(memoryview(data)[sent:])
        finally:
            self.busy = False

    def write_now(self, frame):
        try:
            sent = self.raw.send(frame)
        except BlockingIOError:
            sent = 0
        except OSError:
            return  # the connection is gone; its reader notices and closes it
        if sent < len(frame):
            self.busy = True
            self.finisher = gevent.spawn(self._finish, memoryview(frame)[sent:])

    def _finish(self, rest):
        try:
            self.sock.sendall(rest)
        except OSError:
            pass  # as above: the reader ends the connection
        finally:
            self.busy = False
            self.finisher = None


class WebSocketTimeout:
    """WSGI middleware for every websocket: a send/receive timeout on its TCP
    socket, a :class:`LeanWriter` for its writes, and a plain reader.

    Healthy clients answer the server's pings every ``ping_interval`` (25 s),
    so a timeout well above that only ever fires on a peer that stopped
    reading or vanished.

    The reader: gevent-websocket reads frames through pywsgi's buffered file,
    a C object that calls back into Python for every read. Every such C
    level stays on the reader greenlet's stack, which is saved for as long
    as the connection waits: reading the socket directly keeps it shallow
    (a client sends nothing after its upgrade request until the server's
    answer, RFC 6455 4.1, so nothing is left in the buffered file). For the
    same reason the next application is called as a bound method, which
    Python 3.11 runs without a C level, rather than as a callable object.
    """

    def __init__(self, app, seconds):
        self.app = bound_call(app)
        self.seconds = seconds

    def __call__(self, environ, start_response):
        websocket = environ.get("wsgi.websocket")
        handler = getattr(websocket, "handler", None)
        sock = getattr(handler, "socket", None)
        if sock is not None:
            sock.settimeout(self.seconds)
            websocket.raw_write = LeanWriter(sock).write
            # Headers are read through the stream, payloads through raw_read: both
            # from the socket, or bytes buffered by one would be missed by the other.
            websocket.stream.read = websocket.raw_read = exact_reader(sock)
        return self.app(environ, start_response)


def bound_call(app):
    """``app``'s ``__call__`` as a bound method when ``app`` is an instance of a
    Python class (called without a C level in between), else ``app`` itself."""
    return app.__call__ if isinstance(getattr(type(app), "__call__", None), types.FunctionType) else app


MAX_FRAME = 1 << 20  # bytes; a Socket.IO message is at most max_http_buffer_size (100 kB)
READ_CHUNK = 64 * 1024


def exact_reader(sock):
    """``read(size)`` on ``sock``: ``size`` bytes, or fewer once the peer has closed.

    A frame that declares more than MAX_FRAME bytes is refused before any
    of it is read (gevent-websocket would otherwise try to allocate what a
    hostile header claims), and a large one is read in chunks.
    """
    def read(size):
        if size > MAX_FRAME:
            raise OSError(f"websocket frame of {size} bytes refused (at most {MAX_FRAME})")
        data = sock.recv(min(size, READ_CHUNK))
        if len(data) == size or not data:
            return data
        chunks = [data]
        size -= len(data)
        while size:
            data = sock.recv(min(size, READ_CHUNK))
            if not data:
                break
            chunks.append(data)
            size -= len(data)
        return b"".join(chunks)
    return read
