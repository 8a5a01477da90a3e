"""Herald's WSGI entry point; ``python wsgi.py`` serves it with gevent.

gevent's monkey-patching comes first, before anything imports sockets or
threads, so that Redis, Socket.IO and Flask all cooperate in one process.
``HOST`` (default 127.0.0.1) and ``PORT`` (default 5000) say where to listen.
With ``REUSE_PORT=1`` the listening socket is opened with ``SO_REUSEPORT``, so
that several web processes (``WEB_PROCESSES=N make run``) share one port and
the kernel spreads new connections across them; each has its own Redis
subscription and relays to its own clients.
"""
import gevent
from gevent import monkey

monkey.patch_all()
# gevent records, for each greenlet it spawns, the stack that spawned it (for
# debugging): that keeps frame objects alive for every connection's reader.
gevent.config.track_greenlet_tree = False

import gc
import logging
import os
import signal
import socket

from app import create_app, services, settings
from app.realtime.wire import bound_call, handler_class
from app.realtime.wire.admission import AdmittingServer
from app.realtime.wire.descriptors import fd_budget

app = create_app()
log = logging.getLogger("herald.web")


def tune_garbage_collection():
    """Keep the cyclic garbage collector's pauses out of delivery latency.

    A web process holding thousands of connections has a large heap, and a
    full collection of it stalls every delivery for tens of milliseconds
    (it set the p99 latency floor in bench/fanout.py). What fan-out allocates
    is freed by reference counting, not by the collector: so the objects of
    start-up are frozen out of its sight, and it runs far less often.
    """
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


def listener(host, port, reuse_port):
    """The listening socket; with ``reuse_port`` other processes may bind the same port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


def serve():
    """Serve Herald until SIGINT or SIGTERM, then stop cleanly."""
    host = settings.get("HOST")
    port = settings.port()
    tune_garbage_collection()
    built = services.of(app)
    relay, presence = built.relay, built.presence
    relay.start()
    for name, loop, args in services.background_loops(app, built):
        log.info("starting %s", name)
        gevent.spawn(loop, *args)
    # ACCESS_LOG=1: one line per request, through logging (so in LOG_FORMAT too).
    access_log = logging.getLogger("herald.access") if settings.get("ACCESS_LOG") else None
    sock = listener(host, port, settings.get("REUSE_PORT"))
    # The middleware chain itself, as a bound method: Flask's __call__ only calls
    # it, and each callable object would be a C level on every reader's stack.
    config = app.config
    handler = handler_class(config["WEBSOCKET_TIMEOUT"], config["REQUEST_TIMEOUT"])
    limit = config["MAX_CONNECTIONS"] or fd_budget()
    server = AdmittingServer(sock, bound_call(app.wsgi_app), limit,
                             config["MAX_CONNECTIONS_PER_ADDRESS"],
                             max_handshakes=config["MAX_HANDSHAKES"],
                             request_timeout=config["REQUEST_TIMEOUT"],
                             # A websocket Herald refuses gets its 400, not a 101.
                             pre_start_hook=built.upgrade_refusal,
                             handler_class=handler, log=access_log)
    built.metrics.server = server  # its connection figures, in /metrics

    def shutdown():
        log.info("stopping")
        relay.stop()
        server.stop(timeout=2)
        try:
            presence.retire()  # its users leave now, unless another process holds them
        except Exception as exc:  # Redis away: the others reap this process's counts later
            log.warning("presence not retired: %s", exc)

    gevent.signal_handler(signal.SIGTERM, shutdown)
    gevent.signal_handler(signal.SIGINT, shutdown)
    log.info("serving on http://%s:%d/ (process %d)", host, port, os.getpid())
    server.serve_forever()


if __name__ == "__main__":
    serve()
