"""``WebSocketHandler``: gevent-websocket's handler, as Herald's server needs it.

Used as pywsgi's ``handler_class`` (wsgi.py). For every request it reads
through a 512-byte buffer instead of 8 KiB: the buffer lives as long as the
connection, though a websocket only uses it for its upgrade request. Once a
request has become a websocket:

- its parsed request headers are let go (an ``email.message.Message`` of
  ~1 KiB kept for the connection's life otherwise; the environ has them all);
- its TCP socket gets a send/receive timeout (``WEBSOCKET_TIMEOUT``): healthy
  clients answer pings every 25 s, so a timeout well above that only fires
  on a peer that stopped reading or vanished (once handed over, a write
  still has it; reads are checked for silence by connection.py instead);
- writes go through a :class:`~.writer.LeanWriter` (the websocket's
  ``raw_write`` is its ``write``; websocket.py finds it there for the fan-out
  loop), reads straight from the socket
  (:func:`~.reader.exact_reader`), for both frame headers and payloads;
- websocket.py may take the connection over (:meth:`WebSocketHandler.hand_over`,
  when the server can keep a socket open past its handler: AdmittingServer's
  ``keep``): it is then read from the hub (connection.py), and this handler's
  greenlet ends without closing the socket, its environ cut down to
  ``KEPT_ENVIRON`` (python-socketio keeps the environ for the session's life;
  Herald reads only these after the connect).

A small answer's head and body leave in one ``send`` (one_send.py). A request's
headers are read without the ``email`` parser when every line is plain
(request_headers.py, pywsgi's ``MessageClass``).

Any other request's environ holds this handler (``herald.connection``) for
its life: an event stream's socket is written from the fan-out loop too
(sse_writer.py).
"""
import io
import socket
import types

from geventwebsocket.handler import WebSocketHandler as _WebSocketHandler

from app.ops.redact import redact_requestline, redact_text
from app.realtime.wire.admission import SERVER
from app.realtime.wire.one_send import OneSend
from app.realtime.wire.reader import exact_reader
from app.realtime.wire.request_clock import RequestClock
from app.realtime.wire.request_headers import read_headers
from app.realtime.wire.sse_writer import CONNECTION
from app.realtime.wire.writer import LeanWriter

READ_BUFFER = 512
BODY_MOST = 64 * 1024  # bytes a chunked body is given time for (Flask's MAX_CONTENT_LENGTH)
TOO_SLOW = (b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json"
            b"\r\nContent-Length: 56\r\n\r\n"
            b'{"error":"the request was not sent in time; send again"}')
# What of a websocket's environ is kept once it is handed over: what Herald and
# python-socketio read after the upgrade (namespace.py, per_address.py,
# admission.opened, origins.py), and gevent-websocket's key, emptied as it does.
KEPT_ENVIRON = ("REMOTE_ADDR", "REMOTE_PORT", "HTTP_HOST", "HTTP_ORIGIN", "wsgi.url_scheme",
                "PATH_INFO", "QUERY_STRING", "werkzeug.proxy_fix.orig", "wsgi.websocket", SERVER)


class WebSocketHandler(OneSend, _WebSocketHandler):
    """See the module. ``timeout``: seconds a websocket may make no progress;
    ``request_timeout``: seconds for each read or write before that (a request
    sent by halves, a connection that sends nothing, is closed then)."""

    timeout = 60
    request_timeout = 10
    handed_over = False  # set by hand_over: the socket outlives this handler
    MessageClass = staticmethod(read_headers)  # pywsgi's headers, as it parses them

    def handle(self):
        self.socket.settimeout(self.request_timeout)
        # pywsgi writes a response's headers and body in two sends; with Nagle's
        # algorithm the second waits for the client's delayed ACK: 40 ms on every
        # keep-alive request (a publish took 48 ms instead of 5).
        try:
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass  # not TCP (a unix socket): nothing to do
        super().handle()

    def __init__(self, sock, address, server, rfile=None):
        if rfile is None:  # every read bounded, and a request's all by its deadline
            rfile = io.BufferedReader(RequestClock(sock, self.request_timeout), READ_BUFFER)
        super().__init__(sock, address, server, rfile)

    def handle_one_request(self):
        """pywsgi's, with a deadline: the request's head must be in within
        ``request_timeout`` seconds of its first byte (seen while it was parked,
        admission.py; else of this call: on a kept-alive connection, of the last
        answer), whatever pace it is sent at; a wait in the handshake line is not
        the client's, but a head sent by then is read. Until it is in, the server
        may let the connection go for a newcomer (admission.py)."""
        clock = getattr(self.rfile, "raw", None)
        if isinstance(clock, RequestClock):  # from its first bytes, if it was parked
            arrived = getattr(self.server, "arrived", None)
            clock.start(self.request_timeout, arrived.pop(self.socket, None) if arrived else None)
        reading = getattr(self.server, "reading", None)
        if reading is not None and self.socket is not None:
            reading(self._host(), self.socket)
        return super().handle_one_request()

    def read_request(self, raw_requestline):
        """pywsgi's; once the head is in, the body has its own deadline."""
        try:
            return super().read_request(raw_requestline)
        finally:
            read = getattr(self.server, "read", None)
            if read is not None and self.socket is not None:
                read(self._host(), self.socket)
            clock = getattr(self.rfile, "raw", None)
            if isinstance(clock, RequestClock):
                clock.body(getattr(self, "content_length", None), BODY_MOST)

    def _host(self):
        return self.client_address[0] if isinstance(self.client_address, tuple) else ""

    def _handle_client_error(self, ex):
        """pywsgi's answer to a malformed request; a head not in by its deadline
        (or a read timing out) is answered 408, without pywsgi's traceback."""
        if isinstance(ex, TimeoutError):
            return ("408", TOO_SLOW)
        return super()._handle_client_error(ex)

    def handle_one_response(self):
        """A request served: unless it became a websocket (whose slot the namespace
        frees once its Socket.IO connect is answered), its handshake slot is free
        (AdmittingServer.handshake_done). The environ's reference to this handler
        (events.CONNECTION) goes with the request, not at the next collection."""
        try:
            return super().handle_one_response()
        finally:
            if self.environ is not None:
                self.environ.pop(CONNECTION, None)
            done = getattr(self.server, "handshake_done", None)
            if done is not None and "wsgi.websocket" not in (self.environ or {}) \
                    and isinstance(self.client_address, tuple):
                done(self.client_address[0], self.client_address[1])

    def upgrade_connection(self):
        refusal = super().upgrade_connection()
        websocket = self.environ.get("wsgi.websocket")
        if websocket is not None and refusal is None:
            self.socket.settimeout(self.timeout)
            # Kept only through raw_write (bound to it): one more attribute on this
            # handler would grow its __dict__ past a resize, ~1 KiB per connection.
            websocket.raw_write = LeanWriter(self.socket).write
            # Headers are read through the stream, payloads through raw_read: both
            # from the socket, or bytes buffered by one would be missed by the other.
            websocket.stream.read = websocket.raw_read = exact_reader(self.socket)
        return refusal

    def hand_over(self):
        """Let this websocket's socket outlive the handler (websocket.py serves it
        from the hub): the server's ``keep`` is told, and its ``release`` for the
        connection's end returned; None when the server cannot keep a socket (a
        plain pywsgi server closes it once the handler returns)."""
        keep = getattr(self.server, "keep", None)
        if keep is None:
            return None
        self.handed_over = True
        return keep(self.socket, self.client_address)

    def run_websocket(self):
        """gevent-websocket's, less two things: the client is not entered in
        ``server.clients`` (Herald never reads it: one more object per connection),
        and a websocket handed over is neither closed nor read any more here:
        pywsgi's loop ends, leaving the socket open (``self.socket`` None), the
        request's buffered reader is closed (its reference on the socket let go),
        gevent-websocket's WebSocket is marked closed without a close frame (the
        Connection has the socket now), and the environ is cut down to
        ``KEPT_ENVIRON``."""
        if getattr(self, "prevent_wsgi_call", False):
            return
        try:
            list(self.application(self.environ, lambda s, h, e=None: []))
        finally:
            environ = self.environ
            if self.handed_over:
                kept = {key: environ[key] for key in KEPT_ENVIRON if key in environ}
                environ.clear()
                environ.update(kept)
                self.rfile.close()
                self.socket = None
                # Its __del__ would close it: a close frame on the connection served on.
                self.websocket.closed = True
            elif not self.websocket.closed:
                self.websocket.close()
            # Its __del__ closes it again, and a closed WebSocket's close() calls its
            # ``current_app``, which (our server's application has none) makes a new
            # class each time: reference cycles for the rarely run collector (wsgi.py),
            # 4.5 KiB a connection (bench/idle_memory.py). With no handler that call
            # fails at once, and __del__ swallows it.
            self.websocket.handler = None
            environ["wsgi.websocket"] = None
            self.websocket = None

    def log_request(self):
        """Write the access log's line to the server's log (``ACCESS_LOG=1``: the
        ``herald.access`` logger, wsgi.py), as pywsgi does; gevent-websocket's
        own ``log_request`` writes to a logger of its own instead, which Herald
        keeps quiet (app/ops/logs.py), so that ACCESS_LOG had no effect."""
        if "101" not in str(self.status):  # an upgrade to websocket: not a request done
            self.server.log.write(self.format_request())

    def format_request(self):
        """The access log's line (ACCESS_LOG=1). A credential in the query string (a
        stream token: EventSource cannot send headers) is redacted, however its name
        is spelled (app/ops/redact.py); pywsgi logs no headers."""
        line = super().format_request()
        if self.requestline:
            line = line.replace(self.requestline, redact_requestline(self.requestline), 1)
        return line

    def log_error(self, msg, *args):
        """pywsgi's error log (stderr), which quotes a malformed request's line whole:
        secret query values redacted there too."""
        try:
            message = msg % args if args else msg
        except (TypeError, ValueError):
            message = f"{msg!r} {args!r}"
        super().log_error(redact_text(message))

    def get_environ(self):
        environ = super().get_environ()
        if environ.get("HTTP_UPGRADE", "").lower() == "websocket":
            self.headers = None
        else:  # an event stream may write beside pywsgi (sse_writer.py)
            environ[CONNECTION] = self
        return environ


def handler_class(timeout, request_timeout=10):
    """The handler class for pywsgi: ``timeout`` for websockets, ``request_timeout``
    for everything before (seconds)."""
    return type("WebSocketHandler", (WebSocketHandler,),
                {"timeout": timeout, "request_timeout": request_timeout})


def bound_call(app):
    """``app``'s ``__call__`` as a bound method when ``app`` is an instance of a
    Python class (Python 3.11 calls it without a C level in between, which
    would stay on every websocket reader's saved stack), else ``app`` itself."""
    call = getattr(type(app), "__call__", None)  # noqa: B004 (the function itself, not callable())
    return app.__call__ if isinstance(call, types.FunctionType) else app
