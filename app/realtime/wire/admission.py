"""Admission control for the web server: no client can take all of a process's connections.

An idle TCP connection costs a file descriptor and a greenlet; ~21,000 of
them exhausted a process's descriptors, after which it answered nothing,
``/healthz`` included. So, before any request is read:

- at most ``max_connections`` connections are served at once, and at most
  ``per_address`` from one client address (when set); one more is answered
  ``503`` with ``Retry-After`` and closed at once, freeing its descriptor;
- past the limit, a health probe (``GET /healthz``, ``/readyz``, ``/metrics``)
  is still served from a ``reserve`` of descriptors kept for it, so an
  operator always learns what the process is doing;
- every connection has ``request_timeout`` seconds for each read and write
  until its request becomes a websocket (which then has the websocket
  timeout): a half-sent request, or a connection that sends nothing, is
  closed then (the transport's WebSocketHandler applies it).

``fd_budget()`` raises the process's soft descriptor limit to its hard one
and says how many connections that allows, less the reserve and what Redis,
logs and listeners need.
"""
import logging
import resource
import socket as sockets

from gevent import pywsgi

log = logging.getLogger("herald.admission")

PROBES = (b"GET /healthz", b"GET /readyz", b"GET /metrics")
PROBE_WAIT = 1.0  # seconds to wait for an over-limit connection's request line
OTHER_FDS = 400   # descriptors kept for Redis pools, logs, listeners and the reserve


def fd_budget():
    """Raise the soft RLIMIT_NOFILE to the hard limit; the connections it allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return max(64, soft - OTHER_FDS)


def refusal(reason, retry_after=5):
    """A complete HTTP 503 answer naming ``reason``."""
    body = ('{"error":"' + reason + '"}').encode()
    return (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            b"Retry-After: " + str(retry_after).encode() + b"\r\nConnection: close\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


class AdmittingServer(pywsgi.WSGIServer):
    """pywsgi's WSGIServer that admits connections within limits (see the module)."""

    def __init__(self, listener, application, max_connections, per_address=0, reserve=64,
                 **options):
        super().__init__(listener, application, **options)
        self.max_connections = max_connections
        self.per_address = per_address
        self.reserve = reserve
        self.open = 0
        self.by_address = {}
        self.refused = 0

    def handle(self, sock, address):
        host = address[0] if isinstance(address, tuple) else ""
        over = self._over_limit(host)
        if over and not (self.open < self.max_connections + self.reserve and self._probe(sock)):
            self.refused += 1
            self._refuse(sock, over)
            return
        self.open += 1
        self.by_address[host] = self.by_address.get(host, 0) + 1
        try:
            super().handle(sock, address)
        finally:
            self.open -= 1
            left = self.by_address[host] - 1
            if left:
                self.by_address[host] = left
            else:
                del self.by_address[host]

    def _over_limit(self, host):
        if self.open >= self.max_connections:
            return f"this server is at its limit of {self.max_connections} connections; retry shortly"
        if self.per_address and self.by_address.get(host, 0) >= self.per_address:
            return (f"too many connections from {host} (at most {self.per_address}); "
                    "close some and retry")
        return None

    def _probe(self, sock):
        """True when the connection's first bytes are a health probe's request line."""
        try:
            sock.settimeout(PROBE_WAIT)
            start = sock.recv(16, sockets.MSG_PEEK)
        except OSError:
            return False
        return start.startswith(PROBES)

    @staticmethod
    def _refuse(sock, reason):
        try:
            sock.settimeout(1)
            sock.sendall(refusal(reason))
        except OSError:
            pass
        finally:
            sock.close()
