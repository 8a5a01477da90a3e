"""Fan-out: one notification (or a batch) to every connection that should have it.

A notification arrives from Redis already encoded as JSON (relay.py). Its
websocket frame is built once (frames.py) and written straight from the
fan-out loop to every recipient whose connection is idle (nothing queued,
nothing being written): one non-blocking ``send`` each, through the
connection's LeanWriter (wire/writer.py), no greenlet woken, no JSON
work per client. Only when a client is busy does the notification go through
its Engine.IO queue, and there it joins the packet that waits at the end of
the queue: one ``notifications`` frame instead of many, so a busy client
costs fewer frames and system calls, and an idle one gets each notification
at once, alone, as ``notification``.

:class:`FanOut` is an object of its own, held by HeraldServer as ``fanout``
(server.py): it reads the Socket.IO manager's rooms and the Engine.IO server's
``sockets``, keeps its own state (the packet waiting for each busy client,
the ``deliveries`` and ``batch_sizes`` figures app/ops/metrics.py reports),
and hands a client too slow to keep to the ``shed`` it was given.

What the relay hands on together (a batch) is fanned out together: an idle
client gets one frame with all of the batch's notifications that are for it,
and that frame is built once for every client that gets the same ones.
"""
from app.ops.histogram import BATCH_BUCKETS, Histogram
from app.realtime.wire import NotificationPacket
from app.realtime.wire.frames import notifications_frame

MERGE_MAX = 50  # notifications one frame may carry


class FanOut:
    """The fan-out loop, and merging for busy clients (see the module).

    ``manager``: the Socket.IO server's client manager (who is in which room);
    ``eio``: its Engine.IO server (the connections, by Engine.IO sid);
    ``max_queue``: notifications that may wait for one client; ``shed(socket)``:
    called for a client with that many waiting (the server cuts it off).
    Usage: ``FanOut(sio.manager, sio.eio, 1000, sio.shed).fan_out_many(namespace, batch)``.
    """

    def __init__(self, manager, eio, max_queue, shed):
        self.manager = manager
        self.eio = eio
        self.max_queue = max_queue
        self.shed = shed
        self.deliveries = 0  # notifications handed to clients, one per client
        self.batch_sizes = Histogram(BATCH_BUCKETS)
        self.waiting = {}  # eio sid -> its NotificationPacket last put in its queue

    def forget(self, eio_sid):
        """A client's connection ended: nothing waits for it any more."""
        self.waiting.pop(eio_sid, None)

    def recipients(self, namespace, rooms):
        """``(sid, socket)`` of every connection in ``rooms``, each once.

        A room's members are looked up (python-socketio's table of the room,
        then the Engine.IO socket of each) once, and the list kept (in the
        manager's ``kept``) until someone enters or leaves that room: the loop
        then walks a list, not the manager's and Engine.IO's tables, for every
        notification. Those lookups, on a CPU cache the kernel's sends had just
        emptied, were ~15% of the process's time at 20,000 deliveries/s
        (bench/fanout.py; docs/capacity.md). The lists are per room: they hold
        no more than the manager does, however many topics there are.
        """
        kept, table = self.manager.kept, self.manager.rooms.get(namespace, ())
        found = None
        for room in rooms:
            if room not in table:  # nobody in it: nothing kept (topics are unbounded)
                continue
            members = kept.get((namespace, room))
            if members is None:
                members = kept[(namespace, room)] = self._members(namespace, room)
            if not members:
                continue
            if found is None:
                found = members
            else:  # a second room with members: each connection once
                if isinstance(found, list):
                    found = dict(found)
                found.update(members)
        if found is None:
            return ()
        return found if isinstance(found, list) else found.items()

    def _members(self, namespace, room):
        sockets = self.eio.sockets
        members = []
        for sid, eio_sid in self.manager.get_participants(namespace, room):
            socket = sockets.get(eio_sid)
            if socket is not None:
                members.append((sid, socket))
        return members

    def fan_out(self, namespace, rooms, text, skip=None):
        """Send one notification (``text``: its JSON) to every connection in ``rooms``,
        once each, except the sids in ``skip``."""
        frame = None
        sent = 0
        for sid, socket in self.recipients(namespace, rooms):
            if skip and sid in skip:
                continue
            if socket.closing or socket.closed:
                continue
            sent += 1
            writer = getattr(socket, "lean_writer", None)
            if writer is not None and not writer.busy and not socket.queue.qsize():
                if frame is None:
                    frame = notifications_frame(namespace, [text])
                writer.write_now(frame)
            else:
                self.send_notification(namespace, socket.sid, text, socket)
        self.deliveries += sent

    def fan_out_many(self, namespace, batch):
        """:meth:`fan_out` for a batch of ``(rooms, text, skip)`` in order."""
        self.batch_sizes.observe(len(batch))
        if len(batch) == 1:
            self.fan_out(namespace, *batch[0])
            return
        wanted = {}  # Engine.IO socket -> indexes into batch, in order
        for index, (rooms, _text, skip) in enumerate(batch):
            for sid, socket in self.recipients(namespace, rooms):
                if skip and sid in skip:
                    continue
                indexes = wanted.get(socket)
                if indexes is None:
                    wanted[socket] = [index]
                else:
                    indexes.append(index)
        frames = {}
        for socket, indexes in wanted.items():
            if socket.closing or socket.closed:
                continue
            self.deliveries += len(indexes)
            writer = getattr(socket, "lean_writer", None)
            if writer is not None and not writer.busy and not socket.queue.qsize():
                key = tuple(indexes)
                frame = frames.get(key)
                if frame is None:
                    frame = frames[key] = notifications_frame(namespace, [batch[i][1] for i in indexes])
                writer.write_now(frame)
            else:
                for index in indexes:
                    self.send_notification(namespace, socket.sid, batch[index][1], socket)

    def send_page(self, namespace, sid, texts):
        """A replay's page (notifications' JSON ``texts``) to one connection, as one
        ``notifications`` event built from the JSON as it is: written at once when
        the connection is idle, else queued behind what waits (in order)."""
        eio_sid = self.manager.eio_sid_from_sid(sid, namespace)
        socket = self.eio.sockets.get(eio_sid) if eio_sid is not None else None
        if socket is None or socket.closing or socket.closed:
            return
        writer = getattr(socket, "lean_writer", None)
        if writer is not None and not writer.busy and not socket.queue.qsize():
            writer.write_now(notifications_frame(namespace, texts, listed=True))
            return
        packet = NotificationPacket(namespace, texts[0], listed=True)
        for text in texts[1:]:
            packet.add(text)
        socket.queue.put(packet)

    def send_notification(self, namespace, eio_sid, text, socket=None):
        """Queue one notification for a client, merged into the packet waiting for it if any.

        Counted in notifications (to within one frame's MERGE_MAX), a client
        with ``max_queue`` waiting is too slow to keep: it is shed.
        """
        if socket is None:
            socket = self.eio.sockets.get(eio_sid)
            if socket is None or socket.closing or socket.closed:
                return
        queue = socket.queue
        last = self.waiting.get(eio_sid)
        if (last is not None and not last.taken and len(last.items) < MERGE_MAX
                and queue.last() is last):
            last.add(text)
            return
        if queue.qsize() * MERGE_MAX >= self.max_queue:
            self.shed(socket)
            return
        packet = NotificationPacket(namespace, text)
        self.waiting[eio_sid] = packet
        queue.put(packet)  # what Socket.send does, less its per-packet logging call
