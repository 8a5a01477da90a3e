"""Webhook POSTs, to the address that was checked (``outbound.resolve``).

The connection goes to that address, with the URL's host in ``Host`` and,
for https, in SNI and the certificate check; redirects are not followed (a
3xx is a failure); at most ``MAX_REPLY_BYTES`` of the answer are read.
Returns an :class:`Outcome`.

Timeouts: connecting (and TLS) must take at most ``connect_timeout``, and the
whole attempt, from connecting (or reusing a kept-alive connection) to the
last byte of the answer, at most ``timeout`` (``WEBHOOK_TIMEOUT``). A socket
timeout alone bounds each read, so a receiver that dribbled a byte every few
seconds would hold an attempt for as long as it liked: the sockets here set
each operation's timeout to what is left of the attempt's deadline.
"""
import http.client
import socket
import ssl
import time
from typing import NamedTuple

from app.webhooks import outbound

USER_AGENT = "Herald-Webhooks/1"
MAX_REPLY_BYTES = 64 * 1024


class Outcome(NamedTuple):
    ok: bool
    status: int | None   # the HTTP status, None when there was no answer
    error: str | None    # what went wrong, for the endpoint's "last error"
    transient: bool      # worth retrying for the whole retry period (5xx, 408, 429, network)


class _Deadline:
    """A socket whose every send and receive times out at ``deadline`` (a
    ``time.monotonic()`` value; None: the socket's own timeout)."""

    deadline = None

    def _left(self):
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out")
            self.settimeout(left)

    def recv_into(self, *args, **kwargs):
        self._left()
        return super().recv_into(*args, **kwargs)

    def recv(self, *args, **kwargs):
        self._left()
        return super().recv(*args, **kwargs)

    def send(self, *args, **kwargs):
        self._left()
        return super().send(*args, **kwargs)

    def sendall(self, *args, **kwargs):
        self._left()
        return super().sendall(*args, **kwargs)


class _DeadlineSocket(_Deadline, socket.socket):
    pass


class _DeadlineSSLSocket(_Deadline, ssl.SSLSocket):
    def read(self, *args, **kwargs):  # what SSLSocket.recv_into calls, and the handshake's reads
        self._left()
        return super().read(*args, **kwargs)

    def do_handshake(self, *args, **kwargs):
        self._left()
        return super().do_handshake(*args, **kwargs)


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, address, host, port, connect_timeout):
        super().__init__(host, port, timeout=connect_timeout)
        self.address = address
        self.deadline = None  # the attempt's, set by Poster before each request

    def connect(self):
        family = socket.AF_INET6 if ":" in self.address else socket.AF_INET
        sock = _DeadlineSocket(family, socket.SOCK_STREAM)
        self.connect_by = time.monotonic() + self.timeout  # connecting and TLS, in all
        try:
            sock.settimeout(self.timeout if self.deadline is None
                            else max(0.001, min(self.timeout, self.deadline - time.monotonic())))
            sock.connect((self.address, self.port))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except BaseException:
            sock.close()
            raise
        sock.deadline = self.deadline
        self.sock = sock

    def limit(self, deadline):
        """Every later step of this connection ends by ``deadline`` (monotonic)."""
        self.deadline = deadline
        if self.sock is not None:
            self.sock.deadline = deadline


class _PinnedHTTPS(_PinnedHTTP):
    context = ssl.create_default_context()
    context.sslsocket_class = _DeadlineSSLSocket

    def connect(self):
        super().connect()
        self.sock = self.context.wrap_socket(self.sock, server_hostname=self.host,
                                             do_handshake_on_connect=False)
        self.sock.deadline = min(self.connect_by, self.deadline or self.connect_by)
        self.sock.do_handshake()
        self.sock.deadline = self.deadline


class Poster:
    """POSTs for one sender, keeping its connection open between deliveries
    (HTTP keep-alive) while the URL resolves to the same checked address."""

    def __init__(self, connect_timeout=5.0, timeout=10.0, allowed=None):
        self.connect_timeout, self.timeout, self.allowed = connect_timeout, timeout, allowed
        self.connection, self.target = None, None

    def close(self):
        if self.connection is not None:
            self.connection.close()
        self.connection, self.target = None, None

    def deliver(self, url, body, headers):
        """POST ``body`` (bytes) to ``url`` with ``headers``; an :class:`Outcome`, never
        an exception for network trouble."""
        try:
            scheme, host, port, path = outbound.parse(url)
            address = outbound.resolve(host, port, self.allowed)[0]
        except outbound.UrlRefused as exc:
            # DNS now answers a refused address (or nothing): not sent; retried like a
            # network error, since DNS may change back.
            self.close()
            return Outcome(False, None, str(exc).removeprefix("url: "), True)
        target = (scheme, host, port, address)
        reused = self.connection is not None and self.target == target
        if not reused:
            self.close()
            kind = _PinnedHTTPS if scheme == "https" else _PinnedHTTP
            self.connection = kind(address, host, port, self.connect_timeout)
            self.target = target
        self.connection.limit(time.monotonic() + self.timeout)
        try:
            status = self._post(path, body, headers)
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
            self.close()
            if not reused:
                return Outcome(False, None, f"{type(exc).__name__}: {exc}".rstrip(": "), True)
            # The receiver closed the kept-alive connection meanwhile: once more, afresh.
            return self.deliver(url, body, headers)
        except TimeoutError:
            self.close()
            return Outcome(False, None, f"timed out: the attempt may take {self.timeout:g} s "
                           "(WEBHOOK_TIMEOUT), connecting included", True)
        except ssl.SSLError as exc:
            self.close()
            return Outcome(False, None, f"TLS: {exc}", True)
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            return Outcome(False, None, f"{type(exc).__name__}: {exc}".rstrip(": "), True)
        if 200 <= status < 300:
            return Outcome(True, status, None, False)
        if 300 <= status < 400:
            return Outcome(False, status, f"HTTP {status} (redirects are not followed)", False)
        return Outcome(False, status, f"HTTP {status}", status >= 500 or status in (408, 429))

    def _post(self, path, body, headers):
        connection = self.connection
        connection.request("POST", path, body=body, headers={
            "Content-Type": "application/json", "User-Agent": USER_AGENT, **headers})
        reply = connection.getresponse()
        reply.read(MAX_REPLY_BYTES)
        if not reply.isclosed():  # more than we read, or the server closes: start afresh
            self.close()
        elif reply.will_close:
            self.close()
        return reply.status

