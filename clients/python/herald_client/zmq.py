"""Herald over ZeroMQ: publish to, and follow, Herald's bridge in plain pyzmq.

They run anywhere pyzmq does (``pip install './clients/python[zmq]'``): a
service, a cron job, a Spark executor; no Redis, no Herald code.

    from herald_client.zmq import Publisher, Subscriber

    with Publisher(confirmed=True) as pub:
        notification_id = pub.publish("spark.job.succeeded", "Rollup done", severity="success")

    with Subscriber(["spark"], origin=pub.origin) as sub:   # drop our own echo
        envelope = sub.receive(timeout=5)

Every Publisher has an ``origin`` (a random hex id unless given) that it puts
in each envelope; a Subscriber given the same origin drops those echoes.
Fire-and-forget publishing returns at once (ZeroMQ queues up to the socket's
high-water mark, then blocks); confirmed publishing waits for the bridge's
answer and returns the notification's id, or raises PublishError.
"""
import json
import time
import uuid

import zmq

PULL_ENDPOINT = "tcp://127.0.0.1:5557"
XPUB_ENDPOINT = "tcp://127.0.0.1:5558"
ROUTER_ENDPOINT = "tcp://127.0.0.1:5559"


def topic_matches(prefix, topic):
    """True when the subscription ``prefix`` covers ``topic`` on segment boundaries
    (Herald's rule: ``spark`` covers ``spark.job``, never ``sparkle``; ``*`` all)."""
    return prefix in ("*", topic) or (topic.startswith(prefix) and topic[len(prefix)] == ".")


class PublishError(RuntimeError):
    """The bridge refused a notification, or did not answer in time."""


def _client_curve(socket, curve):
    """Make ``socket`` a CURVE client: ``curve = (client_secret_file, server_public_file)``."""
    if curve:
        import zmq.auth
        client_public, client_secret = zmq.auth.load_certificate(curve[0])
        server_public, _ = zmq.auth.load_certificate(curve[1])
        socket.curve_secretkey = client_secret
        socket.curve_publickey = client_public
        socket.curve_serverkey = server_public


class _Peer:
    def __init__(self, context):
        self._own_context = context is None
        self.context = context or zmq.Context()

    def close(self):
        self.socket.close(linger=1000)
        if self._own_context:
            self.context.term()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Publisher(_Peer):
    """Publishes to the bridge, fire-and-forget (PUSH) or confirmed (REQ)."""

    def __init__(self, endpoint=None, confirmed=False, origin=None, timeout=10.0,
                 context=None, curve=None):
        super().__init__(context)
        self.origin = origin or uuid.uuid4().hex
        self.confirmed = confirmed
        self.timeout_ms = int(timeout * 1000)
        if confirmed:
            self.socket = self.context.socket(zmq.REQ)
            # After a timeout the next request may go out; a late reply is discarded.
            self.socket.setsockopt(zmq.REQ_RELAXED, 1)
            self.socket.setsockopt(zmq.REQ_CORRELATE, 1)
        else:
            self.socket = self.context.socket(zmq.PUSH)
        _client_curve(self.socket, curve)
        self.socket.connect(endpoint or (ROUTER_ENDPOINT if confirmed else PULL_ENDPOINT))

    def publish(self, topic, title, **fields):
        """Publish one notification; returns its id when confirmed, else None."""
        envelope = dict(fields, topic=topic, title=title, origin=self.origin)
        payload = json.dumps(envelope, separators=(",", ":")).encode()
        if not self.confirmed:
            self.socket.send_multipart([topic.encode(), payload])
            return None
        self.socket.send(payload)
        if not self.socket.poll(self.timeout_ms):
            raise PublishError(f"no answer from the bridge within {self.timeout_ms / 1000:g} s")
        answer = json.loads(self.socket.recv())
        if not answer.get("ok"):
            raise PublishError(answer.get("error", "refused"))
        return answer["id"]


class Subscriber(_Peer):
    """Receives the bridge's egress for some topic prefixes, without our own echo."""

    def __init__(self, topics, endpoint=None, origin=None, context=None, curve=None):
        super().__init__(context)
        self.topics = list(topics)
        self.origin = origin
        self.socket = self.context.socket(zmq.SUB)
        _client_curve(self.socket, curve)
        for topic in self.topics:
            # ZeroMQ filters by byte prefix; receive() re-checks segment bounds.
            self.socket.setsockopt(zmq.SUBSCRIBE, b"" if topic == "*" else topic.encode())
        self.socket.connect(endpoint or XPUB_ENDPOINT)

    def receive(self, timeout=None):
        """The next envelope for us, or None after ``timeout`` seconds (None: wait)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
            if not self.socket.poll(wait):
                return None
            topic, origin, payload = self.socket.recv_multipart()
            if self.origin and origin.decode() == self.origin:
                continue  # our own echo
            topic = topic.decode()
            if any(topic_matches(prefix, topic) for prefix in self.topics):
                return json.loads(payload)
