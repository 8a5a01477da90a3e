"""Reading a subscribed connection's messages with one wait on its socket and a
hiredis reader of our own.

redis-py's ``PubSub.get_message(timeout=…)`` is made for a caller that polls:
each call builds a ``poll`` object (under gevent: watchers, a timeout, a
result), polls the socket again to tell a close from data, peeks at it, and
then reads one message; what else arrived is read by further calls, each of
which polls once more. On our machine a notification that arrives alone cost
the relay 518-527 µs of CPU that way, wake included, against 209-240 µs with
this reader (``bench/live_read.py``, same run): a process whose notifications
go to a few connections each spent most of its time there.

A :class:`LiveReader` takes over the connection once redis-py has subscribed it
(and hands on what redis-py had read already): each :meth:`~LiveReader.messages`
returns what hiredis has parsed, else waits once on the socket (with the
socket's own timeout, no poll object), reads everything that has arrived in one
``recv``, and returns it. redis-py still connects, authenticates, picks the
shard's node and subscribes; this reads what follows. It relies on the
connection's ``_sock`` (as app/redis_client.py's QuietCheck does);
tests/unit/stream/test_live_reader.py fails if that changes.

It also checks the link, as redis-py's ``health_check_interval`` did: after
``health_every`` seconds without a byte it sends a PING, and a link that has not
answered one within another ``health_every`` is given up (a ConnectionError: the
follower resubscribes and catches up from the stream). redis-py sent the PING
but never noticed a missing answer.
"""
import time

import hiredis
import redis

POLL_SECONDS = 1.0   # the longest wait, so that the caller looks at its own state
HEALTH_EVERY = 10.0  # seconds of silence before a PING, and for its answer
READ_SIZE = 1 << 16
_MESSAGES = (b"message", b"smessage")
_HEALTH = b"herald-live-health"


class LiveReader:
    """The messages of ``pubsub`` (a subscribed redis-py PubSub) as ``(channel, data)``
    bytes pairs, read from its connection's socket. Use it instead of the PubSub's
    ``get_message`` from then on; closing the PubSub closes it."""

    def __init__(self, pubsub, wait=POLL_SECONDS, health_every=HEALTH_EVERY):
        self.connection = pubsub.connection
        self.pending = self._handed_over(pubsub)
        self.sock = self.connection._sock
        self.sock.settimeout(wait)
        self.reader = hiredis.Reader()
        self.buffer = bytearray(READ_SIZE)
        self.health_every = health_every
        self.heard = time.monotonic()  # the last byte from Redis
        self.pinged = None  # when an unanswered PING went out

    @staticmethod
    def _handed_over(pubsub):
        """What redis-py has read already (its parser's buffer, and the socket's
        bytes it takes in while draining it), as messages."""
        taken = []
        while pubsub.connection.can_read(timeout=0):
            message = pubsub.get_message(timeout=0)
            if message is not None and message["type"] in ("message", "smessage"):
                taken.append((message["channel"], message["data"]))
        return taken

    def messages(self, most):
        """Up to ``most`` messages, in order: those parsed already, else those that
        arrive within the wait (an empty list when none did)."""
        taken, self.pending = self.pending, []
        self._parse(taken, most)
        if taken:
            return taken
        try:
            count = self.sock.recv_into(self.buffer)
        except TimeoutError:
            self._check_health()
            return taken
        except OSError as exc:
            raise redis.ConnectionError(f"reading the subscription failed: {exc}") from exc
        if count == 0:
            raise redis.ConnectionError("Redis closed the subscription")
        self.heard, self.pinged = time.monotonic(), None
        self.reader.feed(self.buffer, 0, count)
        self._parse(taken, most)
        return taken

    def _parse(self, taken, most):
        reader = self.reader
        while len(taken) < most:
            reply = reader.gets()
            if reply is False:
                return
            if isinstance(reply, list) and len(reply) == 3 and reply[0] in _MESSAGES:
                taken.append((reply[1], reply[2]))
            elif isinstance(reply, hiredis.ReplyError):
                raise redis.ConnectionError(f"Redis answered the subscription with: {reply}")
            # else a subscription's confirmation or a PING's answer: heard, nothing more

    def _check_health(self):
        now = time.monotonic()
        if self.pinged is not None:
            if now - self.pinged > self.health_every:
                raise redis.ConnectionError(
                    f"Redis did not answer a PING on the subscription within {self.health_every:g} s")
        elif now - self.heard > self.health_every:
            self.pinged = now
            self.connection.send_command("PING", _HEALTH, check_health=False)
