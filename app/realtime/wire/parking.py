"""Connections accepted but not yet served: parked without a greenlet, and a fair line.

A connection the web server accepts is *parked* (``Parked``) until its first
bytes arrive: an accepted socket, a libev watcher and a timer, no greenlet
(one parked greenlet is ~8 KiB of saved stack; thousands waiting were a
reconnect storm's peak memory). One that sends nothing for ``silence``
seconds is closed: an idle TCP connection holds no handshake slot and no
place in any line (issue 35: 3,000 of them from one address made every
newcomer wait up to 24 s).

Once its first bytes are in, a connection that needs a handshake slot and
finds none waits in :class:`Lines`: one first-come line per client address,
served in turn, so one address holding thousands in line delays a
newcomer from another by one slot's turn, not by its thousands.
"""
import collections
import socket as sockets
import time

PROBES = (b"GET /healthz", b"GET /readyz", b"GET /metrics")


def peek(sock):
    """The connection's first bytes, left unread, without waiting (None: nothing
    yet; b"": closed by its client, or reset)."""
    try:
        return sock._sock.recv(16, sockets.MSG_PEEK | sockets.MSG_DONTWAIT)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError:
        return b""


class Parked:
    """An accepted connection waiting, with no greenlet: for its first bytes (a
    watcher, and ``silence`` seconds at most), then, when it must, for a
    handshake slot (``server.line_wait`` seconds at most). The server's
    ``_arrived(parked, start)`` is called with its first bytes (b"" once its
    client hung up), ``_silent(parked)`` when it sent nothing in time,
    ``_late(parked)`` when it waited in line too long."""

    __slots__ = ("server", "sock", "address", "host", "key", "waiting", "readable", "timer",
                 "since")

    def __init__(self, server, sock, address, key, silence, arrived=False):
        self.server, self.sock, self.address, self.key = server, sock, address, key
        self.host = address[0]
        self.waiting = True
        # When its first bytes were seen (time.monotonic()): its head's deadline counts from then.
        self.since = time.monotonic() if arrived else None
        loop = server.loop
        self.readable = loop.io(sock.fileno(), 1)
        if not arrived:  # (``arrived``: its first bytes are in already)
            self.readable.start(self._readable)
        self.timer = loop.timer(silence)
        self.timer.start(self._timed_out)

    def _readable(self):
        start = peek(self.sock)
        if start is None or not self.waiting:
            return  # (woken for nothing: it goes on watching)
        self.readable.stop()  # once: what it sent stays unread until it is served
        self.since = time.monotonic()
        self.server._arrived(self, start)

    def _timed_out(self):
        if not self.waiting:
            return
        if self.readable.active:  # nothing sent yet
            self.server._silent(self)
        else:
            self.server._late(self)

    def in_line(self, wait):
        """It sent its first bytes and waits for a slot, ``wait`` seconds at most."""
        self.timer.stop()
        self.timer = self.server.loop.timer(wait)
        self.timer.start(self._timed_out)

    def leave(self):
        """No longer waiting (served now, or gone): its watchers are let go."""
        self.waiting = False
        self.readable.close()
        self.timer.close()

    def close(self):
        """Close it, reading what it sent first (closed unread, a reset would say so)."""
        try:
            self.sock._sock.recv(16384, sockets.MSG_DONTWAIT)
        except OSError:
            pass
        self.sock.close()


class Lines:
    """Parked connections waiting for a handshake slot: a line per address, the
    addresses served in turn (round robin), each line in arrival order."""

    def __init__(self):
        self.lines = {}  # address -> deque of Parked
        self.turns = collections.deque()  # addresses with someone in line, next first

    def __len__(self):
        return sum(len(line) for line in self.lines.values())

    def join(self, parked):
        line = self.lines.get(parked.host)
        if line is None:
            line = self.lines[parked.host] = collections.deque()
            self.turns.append(parked.host)
        line.append(parked)

    def waiting(self, host):
        """True when someone from ``host`` is in line."""
        return host in self.lines

    def next(self, may_take):
        """The next connection to serve, taking addresses in turn and passing over
        one that ``may_take(address)`` says is at its share (None: nobody may)."""
        for _ in range(len(self.turns)):
            host = self.turns.popleft()
            line = self.lines[host]
            while line and not line[0].waiting:  # gone meanwhile
                line.popleft()
            if not line:
                del self.lines[host]
                continue
            if not may_take(host):
                self.turns.append(host)
                continue
            parked = line.popleft()
            while line and not line[0].waiting:
                line.popleft()
            if line:
                self.turns.append(host)
            else:
                del self.lines[host]
            return parked
        return None


class Pending:
    """Connections that have not sent a whole request head (parked, or read by a
    greenlet), by address, oldest first: the first to let go at the limit."""

    def __init__(self):
        self.by_host = {}  # address -> {socket: Parked, or None when a greenlet reads it}

    def __getitem__(self, host):
        return self.by_host[host]

    def add(self, host, sock, parked):
        waiting = self.by_host.get(host)
        if waiting is None:
            waiting = self.by_host[host] = {}
        waiting[sock] = parked

    def remove(self, host, sock):
        waiting = self.by_host.get(host)
        if waiting is not None and waiting.pop(sock, False) is not False and not waiting:
            del self.by_host[host]

    def victim_for(self, host):
        """``(address, socket, Parked or None)``: the oldest of the address with the
        most, when that is not ``host`` and has more than one more than ``host``;
        else None (slow or silent connections from a few addresses must not hold
        a server's whole budget against newcomers from others, issue 35)."""
        mine = len(self.by_host.get(host, ()))
        heaviest = max(self.by_host, key=lambda other: len(self.by_host[other]), default=None)
        if heaviest is None or heaviest == host or len(self.by_host[heaviest]) <= mine + 1:
            return None
        sock, parked = next(iter(self.by_host[heaviest].items()))
        return heaviest, sock, parked
