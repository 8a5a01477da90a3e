"""Webhook POSTs, to the address that was checked (``outbound.resolve``).

The connection goes to that address, with the URL's host in ``Host`` and,
for https, in SNI and the certificate check; redirects are not followed (a
3xx is a failure); ``connect`` and ``read`` timeouts bound every step; at
most ``MAX_REPLY_BYTES`` of the answer are read. Returns an :class:`Outcome`.
"""
import http.client
import socket
import ssl
from typing import NamedTuple

from app.webhooks import outbound

USER_AGENT = "Herald-Webhooks/1"
MAX_REPLY_BYTES = 64 * 1024


class Outcome(NamedTuple):
    ok: bool
    status: int | None   # the HTTP status, None when there was no answer
    error: str | None    # what went wrong, for the endpoint's "last error"
    transient: bool      # worth retrying for the whole retry period (5xx, 408, 429, network)


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, address, host, port, connect_timeout, read_timeout):
        super().__init__(host, port, timeout=connect_timeout)
        self.address, self.read_timeout = address, read_timeout

    def connect(self):
        self.sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(self.read_timeout)


class _PinnedHTTPS(_PinnedHTTP):
    context = ssl.create_default_context()

    def connect(self):
        super().connect()
        self.sock = self.context.wrap_socket(self.sock, server_hostname=self.host)


class Poster:
    """POSTs for one sender, keeping its connection open between deliveries
    (HTTP keep-alive) while the URL resolves to the same checked address."""

    def __init__(self, connect_timeout=5.0, read_timeout=10.0, allowed=None):
        self.connect_timeout, self.read_timeout, self.allowed = connect_timeout, read_timeout, allowed
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
            self.connection = kind(address, host, port, self.connect_timeout, self.read_timeout)
            self.target = target
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
            return Outcome(False, None, "timed out", True)
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

