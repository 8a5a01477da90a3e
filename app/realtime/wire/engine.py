"""``EngineIO``: python-engineio's Server with Herald's transport, for Herald's server alone.

python-socketio builds its Engine.IO server from
``socketio.Server._engineio_server_class()``; Herald's Socket.IO server
returns this class there (app/realtime/server.py), so everything below
applies to Herald's connections and to no other Engine.IO server in the
process. Through python-engineio's own extension points:

- ``create_queue()`` (public): every connection's outgoing queue is a
  :class:`~.queues.BoundedQueue` of ``max_queue`` packets; past it,
  ``on_overflow(socket)`` is called (the Socket.IO server passes its
  ``shed``, which cuts the client off) instead of the queue growing;
- the server's own driver table ``_async`` (a copy; python-engineio shares
  one module-wide table between all its servers): its ``websocket`` entry
  is :class:`~.websocket.LeanWebSocket`;
- ``start_background_task()`` (public): the ping greenlet python-engineio
  starts for every connection after every pong (``Socket._send_ping``, a
  greenlet that sleeps 25 s) is scheduled on one :class:`~.pings.PingWheel`
  per server instead, and every other task (an event's handler, a replay) runs
  in a greenlet kept for the next one (workers.py);
- ``handle_request()`` (public): a long-polling POST larger than
  ``max_http_buffer_size`` is answered 413 after its body has been read off
  (up to a bound), and its session closed without waiting; python-engineio
  closed the session waiting for its queue to be written, which with no GET
  waiting never happens: the client got no answer at all. And a long-polling
  session a POST closed (the client's CLOSE packet, a refused payload) is
  forgotten at once: python-engineio dropped it from ``sockets`` only at the
  client's next GET, which after a close never comes, or when its service task
  next swept past it (up to a ping timeout later), so that under churn
  thousands of ended sessions stayed alive (bench/churn.py, issue 35);
- ``_service_task`` (started by ``handle_request``, stopped by ``shutdown``): one
  look at every session every few seconds (sweep.py), not one wake per
  session, which woke a process with N sessions N/20 times a second.
"""
import urllib.parse

import engineio
from engineio import socket as eio_socket

from app.realtime.wire import sweep, workers
from app.realtime.wire.connection import Connection, check_silence, connection_sid
from app.realtime.wire.pings import PingWheel, Wheel
from app.realtime.wire.queues import BoundedQueue
from app.realtime.wire.websocket import LeanWebSocket
from app.web import hosts

_SEND_PING = eio_socket.Socket._send_ping
DRAIN_MAX = 8 << 20  # bytes of an oversized POST body read off before answering


def _websocket_driver(handler, server):
    """The driver table's ``websocket`` entry; the WSGI call is handed out as a
    bound method, which Python 3.11 runs without a C level on the reader's
    stack (a callable object would add one)."""
    return LeanWebSocket(handler, server).__call__


class EngineIO(engineio.Server):
    """See the module. ``max_queue``: packets that may wait for one client;
    ``on_overflow(socket)``: called for a client with that many waiting (None: its
    queue is emptied); ``allowed_hosts``: the Host names answered (ALLOWED_HOSTS,
    see app/web/hosts.py; None: any host); the rest is python-engineio's.
    Usage: ``EngineIO(async_mode="gevent", max_queue=1000, on_overflow=shed)``."""

    def __init__(self, *args, max_queue=1000, on_overflow=None, allowed_hosts=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_queue = max_queue
        self.on_overflow = on_overflow
        self.allowed_hosts = allowed_hosts
        self.lean = self.async_mode == "gevent"  # else built for the CLI or tests, not served
        if self.lean:
            self._async = dict(self._async, websocket=_websocket_driver)
        self.pings = PingWheel(self.session)
        self._silences = {}  # websocket timeout (s) -> the Wheel checking connections' silence
        self.refused_packets = 0  # malformed Engine.IO packets (counted by websocket.serve)

    def silences(self, timeout):
        """The Wheel that drops websockets (connection.py) silent for ``timeout``
        seconds; one per timeout, as a Wheel needs one delay for all its items."""
        wheel = self._silences.get(timeout)
        if wheel is None:
            wheel = self._silences[timeout] = Wheel(check_silence, key=connection_sid,
                                                    find=self.connection)
        return wheel

    def session(self, sid):
        """The open Engine.IO session ``sid`` (python-engineio's Socket), or None. Not
        ``sockets.get`` bound once: python-engineio replaces the dict when it disconnects
        every client."""
        return self.sockets.get(sid)

    def connection(self, sid):
        """The hub-read Connection serving session ``sid``, if it is one and still open."""
        socket = self.sockets.get(sid)
        connection = getattr(socket.queue, "ws", None) if socket is not None else None
        return connection if isinstance(connection, Connection) else None

    def _service_task(self):
        if not self.lean:
            return super()._service_task()
        return sweep.run(self)

    def create_queue(self, *args, **kwargs):
        if not self.lean:
            return super().create_queue(*args, **kwargs)
        return BoundedQueue(self.max_queue, self.overflow)

    def overflow(self, queue):
        """A connection's queue is full: find its socket and report it (rare, so a scan)."""
        for socket in list(self.sockets.values()):
            if socket.queue is queue:
                if self.on_overflow is not None:
                    self.on_overflow(socket)
                else:
                    queue.clear()
                return

    def handle_request(self, environ, start_response):
        if self.allowed_hosts is not None and not hosts.allowed_request(environ, self.allowed_hosts):
            return hosts.refuse(environ, start_response)  # here, not a middleware: see hosts.py
        if environ.get("REQUEST_METHOD") == "POST":
            try:
                length = int(environ.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > self.max_http_buffer_size:
                response = self._too_large(environ, start_response, length)
            else:
                response = super().handle_request(environ, start_response)
            self._forget_if_closed(environ)
            return response
        return super().handle_request(environ, start_response)

    def _forget_if_closed(self, environ):
        sid = urllib.parse.parse_qs(environ.get("QUERY_STRING", "")).get("sid", [None])[0]
        socket = self.sockets.get(sid)
        if socket is not None and socket.closed:
            del self.sockets[sid]

    def _too_large(self, environ, start_response, length):
        body = environ["wsgi.input"]
        left = min(length, DRAIN_MAX)
        while left > 0:
            chunk = body.read(min(left, 65536))
            if not chunk:
                break
            left -= len(chunk)
        sid = urllib.parse.parse_qs(environ.get("QUERY_STRING", "")).get("sid", [None])[0]
        socket = self.sockets.get(sid)
        if socket is not None:
            # Not disconnect(sid): it waits for the queue to be written, which on a
            # long-polling connection with no GET waiting never happens (a hang).
            socket.close(wait=False, abort=True)
        message = f"payload of {length} bytes refused (at most {self.max_http_buffer_size})"
        start_response("413 Payload Too Large",
                       [("Content-Type", "text/plain"), ("Connection", "close")]
                       + self._cors_headers(environ))
        return [message.encode()]

    def start_background_task(self, target, *args, **kwargs):
        if self.lean and getattr(target, "__func__", None) is _SEND_PING:
            self.pings.schedule(target.__self__)
            return None
        if self.lean:  # a worker kept for it (workers.py), not a new greenlet
            return workers.spawn(target, *args, **kwargs)
        return super().start_background_task(target, *args, **kwargs)
