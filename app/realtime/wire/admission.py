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

At most ``max_handshakes`` connections are *being opened* at once: from
the start of their request until their Socket.IO connect is answered (the
namespace calls :meth:`AdmittingServer.handshake_done`), their first
response is out (not a websocket), or HANDSHAKE_WAIT seconds have passed.
One more waits its turn, in arrival order, before anything is read or built
for it (a greenlet with a shallow stack); a health probe never waits. A
reconnect storm once had 5,000 connections mid-handshake at once, each a
greenlet parked deep in a Redis call with its stack saved: the restarted
process peaked at 1.3-1.4x the memory it needed once they were all back.
(Not accepting them at all, leaving them to the kernel's backlog, did as
well, but let a client holding idle connections stop all accepting, health
probes included.)

``fd_budget()`` raises the process's soft descriptor limit to its hard one
and says how many connections that allows, less the reserve and what Redis,
logs and listeners need.
"""
import collections
import functools
import logging
import resource
import socket as sockets

from gevent import pywsgi
from gevent.event import Event

log = logging.getLogger("herald.admission")

PROBES = (b"GET /healthz", b"GET /readyz", b"GET /metrics")
PROBE_WAIT = 1.0  # seconds to wait for an over-limit connection's request line
OTHER_FDS = 400   # descriptors kept for Redis pools, logs, listeners and the reserve
MAX_HANDSHAKES = 256  # connections being opened at once, at most (0: no bound)
HANDSHAKE_WAIT = 3.0  # seconds a connection holds its handshake slot, at most
HANDSHAKE_QUEUE_WAIT = 30.0  # seconds one waits for a slot, at most


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


def opened(server, environ):
    """The request of ``environ`` became a long-lived connection (a Socket.IO connect
    answered, an event stream started): its handshake slot on ``server`` (an
    AdmittingServer, or None) is free. Keyed by the socket's peer, before any
    ProxyFix rewrote REMOTE_ADDR."""
    if server is not None:
        peer = environ.get("werkzeug.proxy_fix.orig") or environ
        server.handshake_done(peer.get("REMOTE_ADDR", ""), environ.get("REMOTE_PORT", ""))


class AdmittingServer(pywsgi.WSGIServer):
    """pywsgi's WSGIServer that admits connections within limits (see the module)."""

    def __init__(self, listener, application, max_connections, per_address=0, reserve=64,
                 max_handshakes=MAX_HANDSHAKES, **options):
        super().__init__(listener, application, **options)
        self.max_connections = max_connections
        self.per_address = per_address
        self.reserve = reserve
        self.max_handshakes = max_handshakes
        self.handshakes = {}  # (address, str(port)) -> the timer that ends its handshake's slot
        self.waiting = collections.deque()  # the Events of connections waiting for a slot
        self.slot_waits = 0     # connections that waited for a slot
        self.slot_expiries = 0  # slots let go at HANDSHAKE_WAIT, not by handshake_done
        self.open = 0
        self.by_address = {}
        self.refused = 0
        self.kept = set()  # sockets kept open past their handler, until do_close passes them

    def handshake_done(self, address, port):
        """The connection from ``address``:``port`` is open (or gone): its slot goes
        to the next in line."""
        timer = self.handshakes.pop((address, str(port)), None)
        if timer is None:
            return
        timer.close()
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.ready():  # (one that gave up waiting is passed over)
                turn.set()
                return

    def _take_slot(self, sock, key):
        """A handshake slot for ``key``, waited for in line when all are taken (a
        health probe goes ahead). After HANDSHAKE_QUEUE_WAIT in line the connection
        goes ahead anyway, as it would without the bound."""
        if len(self.handshakes) >= self.max_handshakes and not self._probe(sock):
            turn = Event()
            self.waiting.append(turn)
            self.slot_waits += 1
            if not turn.wait(HANDSHAKE_QUEUE_WAIT):
                turn.set()  # gave up: passed over when its turn comes
        timer = self.handshakes[key] = self.loop.timer(HANDSHAKE_WAIT)
        timer.start(self._slot_expired, *key)

    def _slot_expired(self, address, port):
        if (address, port) in self.handshakes:
            self.slot_expiries += 1
            self.handshake_done(address, port)

    def handle(self, sock, address):
        host = address[0] if isinstance(address, tuple) else ""
        over = self._over_limit(host)
        if over and not (self.open < self.max_connections + self.reserve and self._probe(sock)):
            self.refused += 1
            self._refuse(sock, over)
            return
        self.open += 1
        self.by_address[host] = self.by_address.get(host, 0) + 1
        key = self._slot_key(address)
        try:
            if key is not None:
                self._take_slot(sock, key)
            super().handle(sock, address)
        finally:
            if sock not in self.kept:  # else released when the connection ends
                self._release(host, key)

    def _slot_key(self, address):
        if isinstance(address, tuple) and self.max_handshakes:
            return (address[0], str(address[1]))
        return None

    def _release(self, host, key):
        """The connection from ``host`` (its handshake slot ``key``) is over."""
        if key is not None:
            self.handshake_done(*key)
        self.open -= 1
        left = self.by_address[host] - 1
        if left:
            self.by_address[host] = left
        else:
            del self.by_address[host]

    def keep(self, sock, address):
        """Keep ``sock`` (from ``address``) open once its handler has returned: it was
        handed over (a websocket served from the hub, app/realtime/wire/connection.py).
        It still counts as open, and still holds its handshake slot, until the
        returned function is called (once, when the connection is over)."""
        self.kept.add(sock)
        host = address[0] if isinstance(address, tuple) else ""
        return functools.partial(self._release, host, self._slot_key(address))

    def do_close(self, sock, *args):
        """StreamServer's, which closes every socket once its handler has returned:
        not one that was kept."""
        if sock in self.kept:
            self.kept.discard(sock)
            return
        super().do_close(sock, *args)

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
