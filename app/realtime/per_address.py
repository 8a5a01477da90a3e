"""Sessions per client address: the guard against one host opening thousands of them.

The web server's first guard (wire/admission.py) counts TCP connections per
address before a request is read; but a Socket.IO client on long-polling
holds two or three of those during its handshake, so a cap low enough to
matter refused people behind one NAT (5-16 of 200 socket.io-client connects
from one office, and 43 of 200 python-socketio clients, failed at a cap of
500 sockets). So the TCP cap is only the descriptor guard, set high, and the
guard against one host hoarding sessions is here: Socket.IO sessions and
event streams are counted per client address (the real client's, when the
request came through a trusted proxy), and past ``limit`` one more is
refused with a reason. The default (``MAX_SESSIONS_PER_ADDRESS``, 3,000) is
three tabs each for a 1,000-person office behind one address.
"""

RETRY_TOO_MANY = 10  # seconds: a refused client's retry_after


class TooMany(Exception):
    """``address`` has ``limit`` sessions open already."""

    def __init__(self, address, limit):
        super().__init__(f"too many sessions from {address} (at most {limit}); "
                         "close some, or retry later")
        self.address = address


class SessionsPerAddress:
    """Open sessions by client address, at most ``limit`` each (0: no limit)."""

    def __init__(self, limit):
        self.limit = limit
        self.open = {}  # address -> sessions open
        self.refused = 0

    def enter(self, address):
        """Count one more session from ``address``, or raise TooMany."""
        count = self.open.get(address, 0)
        if self.limit and count >= self.limit:
            self.refused += 1
            raise TooMany(address, self.limit)
        self.open[address] = count + 1

    def leave(self, address):
        """One session from ``address`` ended."""
        count = self.open.get(address, 0) - 1
        if count > 0:
            self.open[address] = count
        else:
            self.open.pop(address, None)
