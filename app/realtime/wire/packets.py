"""``NotificationPacket``: an Engine.IO message that grows while it waits.

Notifications for a busy client join the packet waiting at the end of its
queue (app/realtime/wire/fanout.py): one ``notifications`` frame instead of many.
The packet is frozen when the writer encodes it. It is an
``engineio.packet.Packet`` to python-engineio's writers, which only call
``encode()`` and read ``packet_type``/``binary``.
"""
from engineio import packet as eio_packet

from app.realtime.wire.frames import event_body


class NotificationPacket(eio_packet.Packet):
    """A ``42/namespace,[...]`` message of notifications (their JSON texts) for one client."""

    def __init__(self, namespace, text, listed=False):  # no super().__init__: its checks are not needed
        self.packet_type = eio_packet.MESSAGE
        self.data = ""
        self.binary = False
        self.encode_cache = None
        self.prefix = f"42{namespace},"
        self.items = [text]
        self.listed = listed  # a ``notifications`` list even of one (a replay's page)
        self.taken = False

    def add(self, text):
        self.items.append(text)

    def encode(self, b64=False):
        if not self.taken:
            self.taken = True
            self.encode_cache = self.prefix + event_body(self.items, self.listed)
            self.items = None
        return self.encode_cache
