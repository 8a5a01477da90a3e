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
the two and nothing is sent twice.
"""
import functools
import logging
import time

import socketio

from app.realtime import presence, rooms
from app.realtime.batched_reads import BatchedReads
from app.realtime.deadlines import Deadlines
from app.realtime.lifecycle import Lifecycle
from app.realtime.per_address import RETRY_TOO_MANY, TooMany
from app.realtime.storm import Busy
from app.realtime.topic_rooms import TopicRooms
from app.realtime.wire.admission import opened as handshake_opened
from app.redis_client import UNAVAILABLE
from app.stream.envelope import EnvelopeError, check_cursor
from app.web.auth import tokens

log = logging.getLogger(__name__)

Refused = socketio.exceptions.ConnectionRefusedError
CONNECT_WAIT = 5.0
# Seconds of sending a replay's steps after which it lets other greenlets run (_replay).
YIELD_AFTER = 0.001
UNREAD = object()  # the stream's state not read ahead (_info_ahead)


class NotificationsNamespace(socketio.Namespace):
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
            asked = []  # the subscriptions, asked as the token names its user (one trip)
            who = self.verifier.verify(auth.get("token"),
                                       along=lambda user: asked.append(self.lifecycle.ask_topics(user)))
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
                info = self._info_ahead()
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

    def _info_ahead(self):
        """The stream's state for a replay that starts now, read before the CONNECT
        reply goes out (the connection is held already, as the replay needs): the
        replay then sends its steps without a read first, and the reply, a short
        replay's page and ``replayed`` leave in one write, where they were three
        (bench/reconnect.py). UNREAD when Redis did not answer: the replay reads it
        then, and answers a failure as it does."""
        try:
            return self._stream_info()
        except UNAVAILABLE:
            return UNREAD

    def _closed_meanwhile(self, sid):
        """True when ``sid``'s Engine.IO connection closed while its connect waited for
        Redis (the token's user, the subscriptions, :meth:`_info_ahead`). python-socketio
        does not call ``on_disconnect`` for a connect it has not answered yet, so such a
        connect must end here, before anything is kept for it (its user online, its
        hold, its turn)."""
        return self.server.open_socket(self.namespace, sid) is None

    def _replay(self, sid, name, topics, last_id, turn=None, info=UNREAD):
        """Send what ``sid`` missed since ``last_id``, then hand it over to the rooms.

        It waits for its ``turn`` (storm.py: a bounded number of replays run at
        once), and lets other greenlets run once a step it sent has taken it
        past YIELD_AFTER since it last did, so that live delivery to the clients
        already back never waits long for a replay. ``info``: the stream's state,
        when :meth:`_info_ahead` read it.
        """
        gone = lambda: sid not in self.users  # noqa: E731
        try:
            if not self._wait_connected(sid) or (turn is not None and not turn.wait(gone)):
                self._not_live(sid)
                return
            if info is UNREAD:
                info = self._stream_info()
            since = time.monotonic()
            for event, payload in self.lifecycle.replay(
                    self.client, sid, name, topics, last_id,
                    lambda live: self._go_live(sid, name, live), gone, info=info):
                if event == "notifications":  # their JSON as it is: no encoding, no scan
                    self.server.send_page(self.namespace, sid, [text for _id, text in payload])
                else:
                    self.emit(event, payload, to=sid)
                # (after `replayed`, the last step, nothing of this replay follows)
                if event != "replayed" and time.monotonic() - since > YIELD_AFTER:
                    self.server.sleep(0)  # the relay and the other replays get their turn
                    since = time.monotonic()
        except UNAVAILABLE:
            log.warning("replay for %r stopped: Redis is unreachable; disconnecting it", name)
            self.disconnect(sid)
        finally:
            self.lifecycle.replayed(sid, turn)
            if turn is not None:
                self.turns.pop(sid, None)

    def _stream_info(self):
        """The stream's state, read once for all the replays starting at this moment
        (a storm's thousands each needed it: a tenth of the restarted process's time)."""
        return self.connect_reads.shared("stream_info", self.lifecycle.stream_info)

    def _say_live(self, sid, position):
        """Tell a connection without ``last_id`` where it went live: every
        notification past ``position`` reaches it, so that is its cursor."""
        if self._wait_connected(sid):
            self.emit("replayed", {"recovered": True, "count": 0, "last_id": position}, to=sid)

    def _say_status(self, sid):
        """Redis is unreachable from this process: a connection that got in anyway
        (its reads were answered just before) hears ``status`` like the others did."""
        if self._wait_connected(sid):
            self.emit("status", self.redis_watch.payload(), to=sid)

    def _not_live(self, sid):
        """A connection whose CONNECT reply did not go out in time (a storm of
        reconnects, say) must not stay connected without being live: it is cut
        off, so that its client connects again and is replayed what it missed."""
        if sid not in self.users:
            return  # gone already
        eio_sid = self.server.manager.eio_sid_from_sid(sid, self.namespace)
        self.presence.closed(self.users.pop(sid))
        self.admins.discard(sid)
        self.topic_rooms.forget(sid)
        if eio_sid is not None:
            self.server.cut_off(eio_sid, f"its connect reply did not go out within "
                                         f"{self.connect_wait} s, so it never went live")

    def _wait_connected(self, sid):
        """Wait until the CONNECT reply has gone out, so replayed events follow it."""
        waited = 0.0
        while not self.server.manager.is_connected(sid, self.namespace):
            if sid not in self.users or waited > self.connect_wait:
                return False
            self.server.sleep(0.005)
            waited += 0.005
        return True

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
