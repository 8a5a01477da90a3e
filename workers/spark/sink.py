"""Publishing from a Spark driver without ever stalling or breaking the job.

:class:`Sink` hands notifications to a background thread through a bounded
queue: the job only enqueues. The thread publishes them in order, through
Redis (``app.stream.publish``, the default) or through the ZeroMQ bridge's confirmed
path (``via="zmq"``). A publish that fails is logged, not raised; past
``maxsize`` waiting, new ones are dropped with a log line. :meth:`close`
waits a bounded time for what is queued to go out.
"""
import logging
import queue
import threading

log = logging.getLogger("herald.spark")

_STOP = object()


class RedisPublisher:
    """Publishes through Redis (REDIS_URL, or make run's private one)."""

    def __init__(self):
        from app.key_layout import connect
        from app.settings import history_max, redis_url
        from app.stream.publish import Bus, durability
        self.client = connect(redis_url())
        self.bus = Bus(self.client, history_max(), durability())

    def publish(self, topic, title, **fields):
        return self.bus.publish(topic, title, **fields)

    def close(self):
        self.client.close()


def zmq_publisher(endpoint=None):
    """A Publisher on the bridge's confirmed (ROUTER) socket."""
    from herald_client.zmq import Publisher
    return Publisher(endpoint, confirmed=True, timeout=5)


class Sink:
    """An ordered, non-blocking outbox for one job run's notifications."""

    def __init__(self, via="redis", zmq_endpoint=None, maxsize=1000):
        self.via = via
        self.zmq_endpoint = zmq_endpoint
        self.queue = queue.Queue(maxsize)
        self.published = 0
        self.failed = 0
        self.thread = threading.Thread(target=self._run, name="herald-sink", daemon=True)
        self.thread.start()

    def send(self, topic, title, **fields):
        """Queue a notification; never blocks."""
        try:
            self.queue.put_nowait((topic, title, fields))
        except queue.Full:
            self.failed += 1
            log.warning("herald: outbox full; dropped %s %r", topic, title)

    def _run(self):
        publisher = None
        while True:
            item = self.queue.get()
            if item is _STOP:
                if publisher is not None:
                    publisher.close()
                return
            topic, title, fields = item
            try:
                if publisher is None:  # made here: a ZeroMQ socket belongs to one thread
                    publisher = (zmq_publisher(self.zmq_endpoint) if self.via == "zmq"
                                 else RedisPublisher())
                publisher.publish(topic, title, **fields)
                self.published += 1
            except Exception as exc:  # publishing must never break the job
                self.failed += 1
                log.warning("herald: could not publish %s %r: %s", topic, title, exc)

    def close(self, timeout=5.0):
        """Wait up to ``timeout`` seconds for the queued notifications to go out."""
        try:
            self.queue.put(_STOP, timeout=timeout)
        except queue.Full:
            return
        self.thread.join(timeout)
