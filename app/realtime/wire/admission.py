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
for it: *parked*, an accepted socket and two libev watchers, with no
greenlet (one parked greenlet, even with a shallow stack, is ~8 KiB of
saved stack: thousands of them waiting were a storm's peak memory). A
parked connection whose first bytes are a health probe's request line goes
ahead at once: a health probe never waits. A reconnect storm once had 5,000
connections mid-handshake at once, each a greenlet parked deep in a Redis
call with its stack saved: the restarted process peaked at 1.3-1.4x the
memory it needed once they were all back. (Not accepting them at all,
leaving them to the kernel's backlog, did as well, but let a client holding
idle connections stop all accepting, health probes included.)

``fd_budget()`` raises the process's soft descriptor limit to its hard one
and says how many connections that allows, less the reserve and what Redis,
logs and listeners need.
"""
import collections
import functools
import logging
import resource
import socket as sockets

import gevent
from gevent import pywsgi

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
        self.parked = collections.deque()  # _Parked connections waiting for a slot, in order
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
        while self.parked:
            parked = self.parked.popleft()
            if parked.waiting:  # (one that went ahead meanwhile is passed over)
                self._go(parked, slot=True)
                return

    def _hold_slot(self, key):
        timer = self.handshakes[key] = self.loop.timer(HANDSHAKE_WAIT)
        timer.start(self._slot_expired, *key)

    def _slot_expired(self, address, port):
        if (address, port) in self.handshakes:
            self.slot_expiries += 1
            self.handshake_done(address, port)

    def do_handle(self, sock, address):
        """StreamServer's, run in the hub for each connection accepted, which spawns
        its greenlet: a connection that must wait for a handshake slot is parked
        instead, without one, and counted open meanwhile."""
        host = address[0] if isinstance(address, tuple) else ""
        key = self._slot_key(address)
        if key is None or self._over_limit(host):
            return super().do_handle(sock, address, None)  # handle() decides, as before
        self._count(host)
        if len(self.handshakes) < self.max_handshakes and not self.parked:
            self._hold_slot(key)
            return super().do_handle(sock, address, key)
        self.slot_waits += 1
        self.parked.append(_Parked(self, sock, address, key))

    def _go(self, parked, slot):
        """Serve ``parked`` now (with a handshake slot, or without: a health probe, or
        one that waited HANDSHAKE_QUEUE_WAIT, goes ahead as it would without the bound)."""
        parked.leave()
        if slot or parked.late:
            self._hold_slot(parked.key)
            return super().do_handle(parked.sock, parked.address, parked.key)
        super().do_handle(parked.sock, parked.address, False)

    def _sort(self, parked):
        """A parked connection sent its first bytes: a health probe goes ahead; a
        client that hung up already is let go; anything else waits on."""
        start = self._peek(parked.sock, 0)
        if not parked.waiting or start is None:
            return
        if start == b"":  # closed by its client while it waited
            parked.leave()
            self._release(parked.host, None)
            parked.sock.close()
        elif start.startswith(PROBES):
            self._go(parked, slot=False)

    def handle(self, sock, address, key=None):
        """Serve one connection, in its greenlet. ``key``: its handshake slot, when
        do_handle counted it open and gave it one (False: counted, no slot); None
        when it is for this to decide (no slot to take, or over a limit)."""
        host = address[0] if isinstance(address, tuple) else ""
        if key is None:
            over = self._over_limit(host)
            if over and not (self.open < self.max_connections + self.reserve and self._probe(sock)):
                self.refused += 1
                self._refuse(sock, over)
                return
            self._count(host)
        try:
            super().handle(sock, address)
        finally:
            if sock not in self.kept:  # else released when the connection ends
                self._release(host, key or None)

    def _count(self, host):
        self.open += 1
        self.by_address[host] = self.by_address.get(host, 0) + 1

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
        start = self._peek(sock, PROBE_WAIT)
        return bool(start) and start.startswith(PROBES)

    @staticmethod
    def _peek(sock, wait):
        """The connection's first bytes, left unread (b"": closed; None: nothing in
        ``wait`` seconds, or an error)."""
        try:
            sock.settimeout(wait)
            return sock.recv(16, sockets.MSG_PEEK)
        except OSError:
            return None

    @staticmethod
    def _refuse(sock, reason):
        try:
            sock.settimeout(1)
            sock.sendall(refusal(reason))
        except OSError:
            pass
        finally:
            sock.close()


class _Parked:
    """An accepted connection waiting for a handshake slot, with no greenlet: a watcher
    for its first bytes (to let a health probe go ahead) and a timer of
    HANDSHAKE_QUEUE_WAIT (after which it goes ahead anyway)."""

    __slots__ = ("server", "sock", "address", "host", "key", "waiting", "late", "readable",
                 "deadline")

    def __init__(self, server, sock, address, key):
        self.server, self.sock, self.address, self.key = server, sock, address, key
        self.host = address[0]
        self.waiting, self.late = True, False
        loop = server.loop
        self.readable = loop.io(sock.fileno(), 1)
        self.readable.start(self._readable)
        self.deadline = loop.timer(HANDSHAKE_QUEUE_WAIT)
        self.deadline.start(self._too_long)

    def _readable(self):
        self.readable.stop()  # once: what it sent stays unread until its turn
        gevent.spawn(self.server._sort, self)  # a short greenlet: it peeks, and is gone

    def _too_long(self):
        if self.waiting:
            self.late = True
            self.server._go(self, slot=False)

    def leave(self):
        """No longer waiting (served now, or gone): its watchers are let go."""
        self.waiting = False
        self.readable.close()
        self.deadline.close()
