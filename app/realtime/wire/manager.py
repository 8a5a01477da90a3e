"""``IndexedManager``: python-socketio's in-memory client manager, with each
client's rooms indexed, so that a disconnect costs what the client is in, and
a room's members as the fan-out last found them (``kept``) dropped as it changes.

python-socketio's ``BaseManager.basic_disconnect`` (every disconnect, and
every connect the namespace refuses) copies the namespace's whole table of
rooms and looks the client up in each: one room per connected client (its
sid room) plus the topic and user rooms, so O(connections) per disconnect.
During a reconnect storm (app/realtime/storm.py) thousands of connects are
refused or cut off while thousands of clients are connected: profiled at
5,000 clients, that scan was a third of the process's busy time, on the loop
that also delivers live notifications. Here each client's room names are kept as
it enters and leaves them, and a disconnect leaves exactly those.

Everything else is python-socketio's own (``socketio.Manager``); the upstream
methods this mirrors are pinned in wire/upstream.py.
"""
import socketio


class IndexedManager(socketio.Manager):
    """``socketio.Manager`` whose disconnects and ``get_rooms`` use a per-client index."""

    def __init__(self):
        super().__init__()
        self.rooms_of = {}  # (namespace, sid) -> the names of the rooms it is in (None too)
        # (namespace, room) -> what the fan-out keeps of its members (wire/fanout.py),
        # dropped when anyone enters or leaves it.
        self.kept = {}

    def basic_enter_room(self, sid, namespace, room, eio_sid=None):
        super().basic_enter_room(sid, namespace, room, eio_sid=eio_sid)
        self.kept.pop((namespace, room), None)
        self.rooms_of.setdefault((namespace, sid), set()).add(room)

    def basic_leave_room(self, sid, namespace, room):
        super().basic_leave_room(sid, namespace, room)
        self.kept.pop((namespace, room), None)
        names = self.rooms_of.get((namespace, sid))
        if names is not None:
            names.discard(room)
            if not names:
                del self.rooms_of[(namespace, sid)]

    def basic_disconnect(self, sid, namespace, **kwargs):
        """What python-socketio's does, leaving the client's own rooms only."""
        if namespace not in self.rooms:
            return
        for room in list(self.rooms_of.get((namespace, sid), ())):
            self.basic_leave_room(sid, namespace, room)
        self.rooms_of.pop((namespace, sid), None)
        self.callbacks.pop(sid, None)
        for pending in (self.pending_connect, self.pending_disconnect):
            sids = pending.get(namespace)
            if sids is not None and sid in sids:
                sids.remove(sid)
                if not sids:
                    del pending[namespace]

    def get_rooms(self, sid, namespace):
        """The rooms a client is in (its sid room included, as upstream)."""
        return [room for room in self.rooms_of.get((namespace, sid), ()) if room is not None]
