"""Admission control for the web server: no client can take all of a process's connections.

Before any request is read (~21,000 idle connections once exhausted a
process's descriptors, after which it answered nothing, ``/healthz`` included):

- at most ``max_connections`` are served at once, at most ``per_address``
  from one client address (when set). At the first limit a newcomer takes
  the place of the oldest connection without a whole request head (silent,
  slow, idle kept-alive) of the address with the most of those, if another
  (parking.Pending; issue 35: 9,900 slow-header connections from each of
  two addresses had every newcomer answered 503); else it gets ``503`` with
  ``Retry-After``, and is closed at once (refusals.py);
- past the limit a health probe (``GET /healthz``, ``/readyz``, ``/metrics``)
  is still served, from a ``reserve`` of descriptors kept for it;
- a new connection is parked, with no greenlet, until its first bytes
  arrive, and closed if it sends nothing for ``request_timeout`` seconds
  (parking.py); its request's head must then be in within that, whatever
  its pace, and its body within that and its size at a minimum rate
  (request_clock.py); each read or write has it too, until the request
  becomes a websocket (which then has the websocket timeout).

At most ``max_handshakes`` connections are *being opened* at once: from
their first bytes until their Socket.IO connect is answered (the namespace
calls :meth:`AdmittingServer.handshake_done`), their first response is out
(not a websocket), or HANDSHAKE_WAIT seconds have passed. A connection that
sent nothing holds no slot (issue 35: idle connections from one address
held them all, and newcomers waited up to 24 s); one address holds three
quarters of them at most. One more waits in its address's line, the lines
served in turn (parking.Lines), parked still: a parked greenlet is ~8 KiB
of saved stack, and thousands waiting were a reconnect storm's peak memory.
A health probe never waits.

How many connections the process's descriptors allow at all (MAX_CONNECTIONS
0) is descriptors.py's. A connection's handler runs in a greenlet kept for the
next one (workers.py), not a new one each.
"""
import functools
import logging
import socket as sockets

from gevent import pywsgi

from app.realtime.wire import workers
from app.realtime.wire.parking import PROBES, Lines, Parked, Pending, peek
from app.realtime.wire.refusals import is_probe, refuse

log = logging.getLogger("herald.admission")

MAX_HANDSHAKES = 256  # connections being opened at once, at most (0: no bound)
HANDSHAKE_WAIT = 3.0  # seconds a connection holds its handshake slot, at most
HANDSHAKE_QUEUE_WAIT = 30.0  # seconds one waits for a slot, at most
REQUEST_TIMEOUT = 10  # seconds a new connection has to send its first bytes (REQUEST_TIMEOUT)


SERVER = "herald.server"  # environ key: the AdmittingServer serving the request


def opened(environ):
    """The request of ``environ`` became a long-lived connection (a Socket.IO connect
    answered, an event stream started): its handshake slot on the AdmittingServer
    serving it (none outside wsgi.py) is free. Keyed by the socket's peer, before
    any ProxyFix rewrote REMOTE_ADDR."""
    server = environ.get(SERVER)
    if server is not None:
        peer = environ.get("werkzeug.proxy_fix.orig") or environ
        server.handshake_done(peer.get("REMOTE_ADDR", ""), environ.get("REMOTE_PORT", ""))


class AdmittingServer(pywsgi.WSGIServer):
    """pywsgi's WSGIServer that admits connections within limits (see the module)."""

    def __init__(self, listener, application, max_connections, per_address=0, reserve=64,
                 max_handshakes=MAX_HANDSHAKES, request_timeout=REQUEST_TIMEOUT, **options):
        """``options``: pywsgi's, and gevent-websocket's ``pre_start_hook``."""
        self.pre_start_hook = options.pop("pre_start_hook", None)
        options.setdefault("spawn", workers.spawn)  # each connection's handler: a kept greenlet
        super().__init__(listener, application, **options)
        self.environ[SERVER] = self  # every request's environ says who serves it: opened()
        self.max_connections = max_connections
        self.per_address = per_address
        self.reserve = reserve
        self.max_handshakes = max_handshakes
        # Slots one address may hold at once: the rest are always there for the others.
        self.share = max(1, max_handshakes - max_handshakes // 4)
        self.request_timeout = request_timeout  # for a connection's first bytes, at most
        self.line_wait = HANDSHAKE_QUEUE_WAIT
        self.handshakes = {}  # (address, str(port)) -> the timer that ends its handshake's slot
        self.held = {}  # address -> handshake slots it holds
        self.lines = Lines()  # connections that sent their first bytes and wait for a slot
        self.pending = Pending()  # connections without a whole request head yet
        self.arrived = {}  # socket -> when a parked connection's first bytes were seen
        self.slot_waits = 0     # connections that waited for a slot
        self.slot_expiries = 0  # slots let go at HANDSHAKE_WAIT, not by handshake_done
        self.silent = 0   # connections closed for sending nothing in time
        self.evicted = 0  # connections let go at the limit, for a newcomer from elsewhere
        self.open = 0
        self.by_address = {}
        self.refused = 0
        self.kept = set()  # sockets kept open past their handler, until do_close passes them


    def handshake_done(self, address, port):
        """The connection from ``address``:``port`` is open (or gone): its slot is free."""
        timer = self.handshakes.pop((address, str(port)), None)
        if timer is None:
            return
        timer.close()
        held = self.held[address] - 1
        if held:
            self.held[address] = held
        else:
            del self.held[address]
        if len(self.handshakes) < self.max_handshakes:
            parked = self.lines.next(self._may_take)
            if parked is not None:
                self._go(parked, slot=True)

    def _may_take(self, host):
        return self.held.get(host, 0) < self.share

    def _slot_free(self, host):
        return (len(self.handshakes) < self.max_handshakes and self._may_take(host)
                and not self.lines.waiting(host))

    def _hold_slot(self, key):
        timer = self.handshakes[key] = self.loop.timer(HANDSHAKE_WAIT)
        self.held[key[0]] = self.held.get(key[0], 0) + 1
        timer.start(self._slot_expired, *key)

    def _slot_expired(self, address, port):
        self.slot_expiries += 1  # (its timer is closed once the slot is let go)
        self.handshake_done(address, port)


    def do_handle(self, sock, address):
        """StreamServer's, run in the hub for each connection accepted, which spawns
        its greenlet: a connection is parked instead, without one, until its first
        bytes are in (and then a handshake slot is free), and counted open meanwhile."""
        host = address[0] if isinstance(address, tuple) else ""
        key = self._slot_key(address)
        if key is None:
            return super().do_handle(sock, address, None)  # handle() decides, as before
        over = self._over_limit(host)
        if over and not (self.open >= self.max_connections
                         and not self._over_limit(host, total=False) and self._evict_for(host)):
            return super().do_handle(sock, address, None)  # refused, or a health probe
        self._count(host)
        start = peek(sock)
        if start:  # its request is in already: no need to watch for it
            return self._serve(sock, address, key, start)
        parked = Parked(self, sock, address, key, self.request_timeout)
        self.pending.add(host, sock, parked)

    def _serve(self, sock, address, key, start):
        """A new connection's first bytes are ``start``: a probe goes, else a slot or a line."""
        if start.startswith(PROBES):
            return super().do_handle(sock, address, False)
        if self._slot_free(key[0]):
            self._hold_slot(key)
            return super().do_handle(sock, address, key)
        self.slot_waits += 1
        parked = Parked(self, sock, address, key, self.line_wait, arrived=True)
        self.pending.add(key[0], sock, parked)
        self.lines.join(parked)

    def _arrived(self, parked, start):
        """A parked connection's first bytes are in (b"": it hung up)."""
        if start == b"":
            self._drop(parked)
            return
        if start.startswith(PROBES) or self._slot_free(parked.host):
            self._go(parked, slot=not start.startswith(PROBES))
            return
        self.slot_waits += 1
        parked.in_line(self.line_wait)
        self.lines.join(parked)

    def _silent(self, parked):
        """A parked connection sent nothing in ``request_timeout`` seconds: closed."""
        self.silent += 1
        self._drop(parked)

    def _late(self, parked):
        """One waited ``line_wait`` s in line: it goes ahead without a slot."""
        self._go(parked, slot=False)

    def _drop(self, parked):
        parked.leave()
        self.pending.remove(parked.host, parked.sock)
        self._release(parked.host, None)
        parked.close()

    def _go(self, parked, slot):
        """Serve ``parked`` now, with a handshake slot or without one."""
        parked.leave()
        self.pending.remove(parked.host, parked.sock)
        self.arrived[parked.sock] = parked.since  # its head's deadline counts from then
        if slot:
            self._hold_slot(parked.key)
        super().do_handle(parked.sock, parked.address, parked.key if slot else False)

    def handle(self, sock, address, key=None):
        """Serve one connection, in its greenlet. ``key``: its handshake slot, when
        do_handle counted it open and gave it one (False: counted, no slot); None
        when it is for this to decide (no slot to take, or over a limit)."""
        host = address[0] if isinstance(address, tuple) else ""
        if key is None:
            over = self._over_limit(host)
            if over and not (self.open < self.max_connections + self.reserve and is_probe(sock)):
                self.refused += 1
                refuse(sock, over)
                return
            self._count(host)
        try:
            super().handle(sock, address)
        finally:
            self.pending.remove(host, sock)
            self.arrived.pop(sock, None)
            if sock not in self.kept:  # else released when the connection ends
                self._release(host, key or None)


    def reading(self, host, sock):
        """``sock`` (from ``host``) waits for a request's head (its first, or the next
        on a kept-alive connection): it may be let go for a newcomer at the limit."""
        self.pending.add(host, sock, None)

    def read(self, host, sock):
        """``sock`` has sent its request's head: it is being served."""
        self.pending.remove(host, sock)

    def _evict_for(self, host):
        """At the connection limit, a newcomer from ``host`` takes the place of the
        oldest connection still without a request head from the address with the
        most of them (see Pending.victim_for). True when one was let go."""
        if self.open >= self.max_connections + self.reserve:
            return False
        victim = self.pending.victim_for(host)
        if victim is None:
            return False
        heaviest, sock, parked = victim
        self.evicted += 1
        if parked is not None:
            self._drop(parked)
        else:  # its greenlet reads a request head: it reads the end of it at once
            self.pending.remove(heaviest, sock)
            try:  # (gevent's own shutdown would raise EBADF in that greenlet instead)
                sock._sock.shutdown(sockets.SHUT_RD)
            except OSError:
                pass
        return True


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

    def _over_limit(self, host, total=True):
        if total and self.open >= self.max_connections:
            return f"this server is at its limit of {self.max_connections} connections; retry shortly"
        if self.per_address and self.by_address.get(host, 0) >= self.per_address:
            return (f"too many connections from {host} (at most {self.per_address}); "
                    "close some and retry")
        return None
