"""What every floor's pywsgi handler does as Herald's does (app/realtime/wire/handler.py):
Nagle's algorithm off, and a small answer's head and body in one send (Herald's own
mixin, app/realtime/wire/one_send.py). A floor that sent them apart would pay two
system calls and two segments per answer that Herald does not, and flatter Herald's
ratio to it."""
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.realtime.wire.one_send import OneSend as _OneSend  # noqa: E402


class OneSend(_OneSend):
    """A mixin for a floor's pywsgi handler class (put it first among the bases)."""

    def handle(self):
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().handle()
