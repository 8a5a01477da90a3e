"""``NotificationsNamespace``: the Socket.IO contract at ``/notifications``.

- connect with ``auth = {"token": TOKEN, "last_id": ID}``; TOKEN is one of
  Herald's tokens or a JWT the host app minted (see app/web/auth/bearer.py); a
  missing, forged or expired token, or one whose user is gone, is refused;
- with ``last_id``, every notification the user may see with a greater id
  that is still in history is replayed (``notifications`` lists, in id
  order), then the connection goes live with no gap and no duplicate; when
  ``last_id`` is older than the retained history, ``reset`` is emitted;
  ``last_id`` 0 replays all the history there is;
- then ``replayed`` ``{"recovered", "count", "last_id"}``: whether the
  replay was whole (false after a reset), how many it sent, and the id from
  which the connection is live (a cursor to resume from); also sent, with
  count 0, to a connection without ``last_id``;
- ``subscribe`` / ``unsubscribe`` with ``{"topics": [...]}`` (topic_rooms.py);
- a connection opened with a host-app token is disconnected by the server
  when that token expires (its ``exp`` plus JWT_LEEWAY); a client connects
  again with a fresh token (clients/js/herald.js asks ``getToken`` for one).

A connection goes through the lifecycle every real-time connection does
(lifecycle.py, shared with Server-Sent Events): admitted, counted under its
address, its topics resolved, held and replayed or live at once, and what it
took given back when it ends; here it is said in Socket.IO's terms (a refusal
is a CONNECT_ERROR whose message socket.io-client shows).

The seam between replay and live (seam.py) *holds* the connection before
the history is read; after the last history chunk, joining the rooms and
being handed what the relay delivered meanwhile past the replay's cursor
(from the window of recent notifications, recent.py) happen in one step with
no I/O in between (gevent switches only on I/O), so nothing falls between
the two and nothing is sent twice. That replay side, in Socket.IO's terms, is
socket_replay.py's (``SocketReplay``, mixed in here).
"""
import functools
import logging

import socketio

from app.realtime import presence, rooms
from app.realtime.batched_reads import BatchedReads
from app.realtime.deadlines import Deadlines
from app.realtime.lifecycle import Lifecycle
from app.realtime.per_address import RETRY_TOO_MANY, TooMany
from app.realtime.socket_replay import UNREAD, SocketReplay
from app.realtime.storm import Busy
from app.realtime.topic_rooms import TopicRooms
from app.realtime.wire.admission import opened as handshake_opened
from app.redis_client import UNAVAILABLE
from app.stream.envelope import EnvelopeError, check_cursor
from app.web.auth import tokens

log = logging.getLogger(__name__)

Refused = socketio.exceptions.ConnectionRefusedError
CONNECT_WAIT = 5.0


class NotificationsNamespace(SocketReplay, socketio.Namespace):
    """Authenticates connections, replays what they missed, manages subscriptions."""

    def __init__(self, client, verifier, max_subscriptions, presence, seam, marks=None,
                 lifecycle=None, connect_reads=None, redis_watch=None):
        super().__init__(rooms.NAMESPACE)
        self.client = client
        # What a connect reads goes through (batched_reads.py: with others of the same moment).
        self.connect_reads = connect_reads or BatchedReads.unbatched(client)
        self.verifier = verifier  # app.web.auth.bearer.TokenVerifier
        self.seam = seam  # a seam.ReplaySeam: holds for replays, beside the relay's feed
        self.connect_wait = CONNECT_WAIT  # seconds for the CONNECT reply to go out
        self.marks = marks  # a read_marks.ReadMarks: read-state changes, coalesced
        # A connection's steps, shared with event streams (without one: no bounds, no count).
        self.lifecycle = lifecycle or Lifecycle(None, seam, self.connect_reads)
        self.users = {}  # sid -> user name, for this process's connections
        self.addresses = {}  # sid -> the client address its session is counted under
        self.expiries = None  # deadlines.Deadlines: when each connection's token expires
        self.admins = set()  # the sids of admins' connections
        # Topic rooms, subscription changes, and the limited connections' limits.
        self.topic_rooms = TopicRooms(client, self.connect_reads, seam, max_subscriptions)
        self.turns = {}  # sid -> its storm.Turn, while its replay waits or runs
        self.presence = presence  # an app.realtime.presence.Presence: who is online
        self.redis_watch = redis_watch  # a RedisWatch: a connect while Redis is down hears so

    # -- connect and replay ----------------------------------------------------

    def on_connect(self, sid, environ, auth=None):
        try:
            auth = auth if isinstance(auth, dict) else {}
            address = environ.get("REMOTE_ADDR", "")
            try:
                self.lifecycle.admit(address, auth.get("last_id") is not None)
            except Busy as busy:
                raise busy.refusal() from None
            except TooMany as exc:
                raise Refused(f"unavailable: {exc}", {"retry_after": RETRY_TOO_MANY}) from None
            try:
                self._connect(sid, auth, address)
            except BaseException:
                self.lifecycle.leave(address)
                raise
        finally:  # answered: the server may open the next connection
            handshake_opened(environ)

    def _connect(self, sid, auth, address):
        try:
            last_id = auth.get("last_id")
            if last_id is not None:
                last_id = check_cursor(last_id)
            # The subscriptions asked as the token names its user, and a resuming
            # connect's stream state with them: one round trip with the user's record.
            asked, state = [], []

            def along(user):
                asked.append(self.lifecycle.ask_topics(user))
                if last_id is not None:
                    state.append(self.lifecycle.ask_stream_info())

            who = self.verifier.verify(auth.get("token"), along=along)
            if last_id is not None and not state:  # a host's JWT: with the subscriptions
                state.append(self.lifecycle.ask_stream_info())
            name = who.name
            topics = self.lifecycle.topics(who, asked[0] if asked else None)
        except tokens.TokenError as exc:
            raise Refused(f"unauthorized: {exc}") from None
        except EnvelopeError as exc:
            raise Refused(f"bad request: {exc}") from None
        except UNAVAILABLE:
            raise Refused("unavailable: Redis is unreachable, retry shortly") from None
        try:
            turn = self.lifecycle.turn() if last_id is not None else None
        except Busy as busy:
            raise busy.refusal() from None
        info = UNREAD
        if last_id is not None:
            self.lifecycle.hold(sid, name, topics, who.topics)
            if turn is None or turn.granted:
                info = self._info_ahead(state[0])
        if self._closed_meanwhile(sid):  # after the reads above: nothing of it is kept
            if last_id is not None:
                self.lifecycle.replayed(sid, turn)
            raise Refused("its connection closed while it connected")
        self.addresses[sid] = address
        self.users[sid] = name
        if who.admin:
            self.admins.add(sid)
        self.presence.opened(name)
        self.topic_rooms.limit(sid, who.topics)
        if who.expires is not None:
            self._deadlines().add(sid, who.expires)
        if self.redis_watch is not None and self.redis_watch.down:
            self.server.start_background_task(self._say_status, sid)
        if last_id is None:
            self._go_live(sid, name, topics)
            self.server.start_background_task(self._say_live, sid, self.lifecycle.position())
        else:
            replay_now = functools.partial(self.server.start_background_task, self._replay, sid,
                                           name, topics, last_id, turn)
            if turn is not None:
                self.turns[sid] = turn
            if turn is None or turn.granted:
                replay_now(info)
            else:  # started when its turn comes: no greenlet waits meanwhile
                turn.start = replay_now

    def _go_live(self, sid, name, topics):
        self.topic_rooms.go_live(self.server, sid, name, topics)

    def _closed_meanwhile(self, sid):
        """True when ``sid``'s Engine.IO connection closed while its connect waited for
        Redis (the token's user, the subscriptions, :meth:`_info_ahead`). python-socketio
        does not call ``on_disconnect`` for a connect it has not answered yet, so such a
        connect must end here, before anything is kept for it (its user online, its
        hold, its turn)."""
        return self.server.open_socket(self.namespace, sid) is None

    def _deadlines(self):
        """The connections' token expiries, kept by one task (deadlines.py)."""
        if self.expiries is None:
            self.expiries = Deadlines(self._expired, self.server.start_background_task,
                                      self.server.sleep)
        return self.expiries

    def _expired(self, sid):
        if sid in self.users:  # still open: its token ran out
            log.info("disconnecting %r: its token expired", self.users[sid])
            self.disconnect(sid)

    def disconnect_user(self, user):
        """Close every connection of ``user`` in this process (their credentials ended)."""
        for sid in [sid for sid, name in self.users.items() if name == user]:
            self.disconnect(sid)

    def on_disconnect(self, sid, reason=None):
        self.lifecycle.leave(self.addresses.pop(sid, None))
        name = self.users.pop(sid, None)
        if name is not None:
            self.presence.closed(name)
        self.admins.discard(sid)
        self.topic_rooms.forget(sid)
        if self.expiries is not None:
            self.expiries.cancel(sid)
        self.lifecycle.forget(sid)
        turn = self.turns.pop(sid, None)
        if turn is not None:
            if turn.start is not None and not turn.granted:
                turn.done()  # it never started: its place in line is let go
            else:
                turn.wake()  # its replay, waiting for its turn, ends now

    # -- subscriptions (topic_rooms.py) ------------------------------------------

    def on_subscribe(self, sid, *args):
        return self.topic_rooms.change(self.server, sid, self.users.get(sid), args, adding=True)

    def on_unsubscribe(self, sid, *args):
        return self.topic_rooms.change(self.server, sid, self.users.get(sid), args, adding=False)

    def apply_change(self, user, added, removed, full=None):
        """``user``'s subscriptions changed (here, or elsewhere: herald:control)."""
        self.topic_rooms.apply_change(self.server, user, added, removed, full)

    # -- presence ----------------------------------------------------------------

    def on_presence(self, sid, *args):
        """``presence`` ``{"watch": true|false}``: start (or stop) getting ``presence``
        events ``{"user", "online", "at"}``; acknowledged with who is online now.
        Admins only (the operations page): presence of everyone is theirs to see."""
        if sid not in self.users:
            return {"ok": False, "error": "not connected"}
        if sid not in self.admins:
            return {"ok": False, "error": "presence events are for admins; GET /api/presence "
                                          "lists who shares a topic with you"}
        if len(args) != 1 or not isinstance(args[0], dict) or not isinstance(args[0].get("watch"), bool):
            return {"ok": False, "error": 'payload: must be {"watch": true} or {"watch": false}'}
        if not args[0]["watch"]:
            self.leave_room(sid, presence.WATCH_ROOM)
            return {"ok": True, "watching": False}
        try:
            now = presence.online(self.client)
        except UNAVAILABLE:
            return {"ok": False, "error": "Redis is unreachable; try again"}
        self.enter_room(sid, presence.WATCH_ROOM)
        return {"ok": True, "watching": True,
                "online": [{"user": p["user"], "since": p["since"]} for p in now]}

    # -- read state ----------------------------------------------------------------

    def on_read(self, sid, *args):
        """Change the read state: ``{"ids": [...]}`` (read), ``{"upto": ID}`` (all read up
        to it), ``{"unread": [...]}`` (unread again) and/or ``{"seen": ID}`` (all shown up to
        it), as app/users/read_state.py parses them; acknowledged by read_marks.py."""
        return self.marks.answer(self.users.get(sid), self.topic_rooms.limits.get(sid), args)
