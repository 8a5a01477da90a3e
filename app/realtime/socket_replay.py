"""The replay side of a Socket.IO connection (``NotificationsNamespace``): what it
missed, sent after its CONNECT reply, then its hand-over to the rooms; or, without
a cursor, where it went live. Said in Socket.IO's terms; the steps themselves are
lifecycle.py's (replay.py, sharded_replay.py).

A connection whose CONNECT reply does not go out within the namespace's
``connect_wait`` is cut off rather than left connected and never live, and a
replay lets the other greenlets run every YIELD_AFTER seconds of sending, so live
delivery to the clients already back never waits long for it.
"""
import logging
import time

from app.redis_client import UNAVAILABLE

log = logging.getLogger("app.realtime.namespace")

# Seconds of sending a replay's steps after which it lets other greenlets run (_replay).
YIELD_AFTER = 0.001
UNREAD = object()  # the stream's state not read ahead (_info_ahead)


class SocketReplay:
    """Mixed into NotificationsNamespace, whose ``users``, ``turns``, ``lifecycle``,
    ``connect_reads``, ``topic_rooms``, ``presence``, ``admins``, ``redis_watch``
    and ``connect_wait`` it uses."""

    def _info_ahead(self, asked=None):
        """The stream's state for a replay that starts now, read before the CONNECT
        reply goes out: the replay then sends its steps without a read first, and the
        reply, a short replay's page and ``replayed`` leave in one write, where they
        were three (bench/reconnect.py). ``asked``: the connect's own
        lifecycle.ask_stream_info, sent with its user's and subscriptions' reads (one
        round trip, where they were two); None (a sharded history, whose shards are
        known only with the topics): read here. UNREAD when Redis did not answer:
        the replay reads it then, and answers a failure as it does."""
        try:
            if asked is not None:
                return self.lifecycle.asked_stream_info(asked)
            return self._stream_info()
        except UNAVAILABLE:
            return UNREAD

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
