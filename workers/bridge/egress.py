"""Egress: every notification, whoever published it, out on the XPUB socket.

Each goes as three frames ``[topic, origin, json_envelope]`` (origin empty
when the publisher set none), so a SUB filters by topic prefix and a peer
can drop its own echo. ZeroMQ's prefix filter is by bytes (``spark`` also
matches ``sparkle``): herald_client.zmq.Subscriber re-checks segment bounds.

A slow subscriber never stalls the bridge: past ``BRIDGE_SNDHWM`` messages
queued for one subscriber, ZeroMQ drops further messages *for that
subscriber only*. Egress is a live view; a peer that must miss nothing
reads history from the Redis stream or the REST API.

XPUB hands the bridge each (un)subscription; it keeps the set of prefixes
subscribed, and sends nothing at all while nobody subscribes.

Egress runs in a process of its own (:class:`EgressProcess` starts and
watches it), so that following Redis and ingesting do not share one core.

A sharded history (``STREAM_SHARDS=N``, app/stream/shards.py) is followed by one
LiveFollower per shard (its stream and its live channel), each in a thread of
its own, all sending on the one XPUB socket, one at a time (a lock: a ZeroMQ
socket is not to be used by two threads at once). Order holds within a shard,
not between shards. With one shard the follower runs in the process's own
thread, as ever.
"""
import logging
import select
import subprocess
import sys
import threading
import time

import zmq

from app.ops import processes
from app.stream.follow import LiveFollower
from app.stream.shards import configured as configured_shards

log = logging.getLogger("herald.bridge")


class Egress:
    """Follows herald:live (missing nothing, see LiveFollower; every shard's live copy,
    in a sharded history) and sends it on XPUB."""

    def __init__(self, context, settings, client, redis_url, secure):
        self.xpub = context.socket(zmq.XPUB)
        self.xpub.sndhwm = settings.sndhwm
        self.xpub.linger = 0
        secure(self.xpub)
        self.xpub.bind(settings.xpub)
        shards = configured_shards()
        self.followers = [LiveFollower(client, redis_url, shard=shard, name="bridge.egress"
                                       if len(shards) == 1 else f"bridge.egress.{shard.index}")
                          for shard in shards]
        self._sending = threading.Lock()  # the followers' threads take turns on the XPUB
        self.private_allowed = settings.private_allowed
        self.withheld = 0
        self.running = True
        self.sent = 0
        self.subscriptions = set()

    def run(self):
        if len(self.followers) == 1:
            self.followers[0].run(lambda: self.running, self.send)
        else:
            threads = [threading.Thread(target=follower.run, name=f"egress-shard-{k}",
                                        args=(lambda: self.running, self._send_one_at_a_time),
                                        daemon=True)
                       for k, follower in enumerate(self.followers)]
            for thread in threads:
                thread.start()
            while self.running:  # in short waits: the signal handlers run in this thread
                time.sleep(0.2)
            for thread in threads:  # each sees ``running`` within a poll of its channel
                thread.join(10)
        self.xpub.close()

    def _send_one_at_a_time(self, envelope, raw):
        with self._sending:
            self.send(envelope, raw)

    def send(self, envelope, raw):
        if envelope.get("user") and not self.private_allowed:
            self.withheld += 1  # a private one, and any local process may subscribe
            return
        if self.xpub.get(zmq.EVENTS) & zmq.POLLIN:
            self._read_subscriptions()
        if not self.subscriptions:
            return
        origin = envelope.get("origin") or ""
        self.xpub.send_multipart([envelope["topic"].encode(), origin.encode(), raw])
        self.sent += 1

    def _read_subscriptions(self):
        """Take in the (un)subscriptions XPUB has for us: first byte 1/0, then the prefix."""
        while self.xpub.get(zmq.EVENTS) & zmq.POLLIN:
            message = self.xpub.recv()
            if message[:1] == b"\x01":
                self.subscriptions.add(message[1:])
            elif message[:1] == b"\x00":
                self.subscriptions.discard(message[1:])

    def stop(self):
        self.running = False


class EgressProcess:
    """Starts ``python -m workers.zmq_bridge egress``, waits until it has bound, restarts it if it dies."""

    READY_SECONDS = 15

    def __init__(self):
        self.process = None
        self.running = False
        self.watcher = None

    def start(self):
        self._spawn()
        self.running = True
        self.watcher = threading.Thread(target=self._watch, name="egress-watch", daemon=True)
        self.watcher.start()

    def _spawn(self):
        self.process = subprocess.Popen([sys.executable, "-m", "workers.zmq_bridge", "egress"],
                                        stdout=subprocess.PIPE)
        ready, _, _ = select.select([self.process.stdout], [], [], self.READY_SECONDS)
        line = self.process.stdout.readline() if ready else b""
        if line.strip() != b"ready":
            self.process.kill()
            self.process.wait()
            raise SystemExit("zmq bridge: the egress process did not start (see its error above)")

    def _watch(self):
        backoff = 1.0
        while self.running:
            code = self.process.wait()
            if not self.running:
                return
            log.warning("egress process exited with %s; restarting in %.0f s", code, backoff)
            time.sleep(backoff)
            backoff = min(backoff * 2, 30)
            try:
                self._spawn()
            except SystemExit as exc:
                log.error("%s", exc)

    def stop(self):
        self.running = False
        processes.stop(self.process)
        if self.process:
            self.process.stdout.close()
