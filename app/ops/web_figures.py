"""A web process's own figures: a snapshot, saved to Redis every few seconds.

Each web process keeps its numbers where they arise (the fan-out, the relay,
the admission, the event streams), at no cost per delivery beyond an integer
addition, and writes a snapshot of them to ``herald:metrics:web:<host>:<pid>``
every SNAPSHOT_EVERY seconds with an expiry; metrics.py renders every
process's snapshot for Prometheus, and the operations console reads them too.
"""
import os
import socket
import time

import orjson
from prometheus_client.registry import CollectorRegistry

from app.redis_client import UNAVAILABLE

WEB_PREFIX = "herald:{metrics}:web:"  # one slot: read together (MGET) on a Redis Cluster
SNAPSHOT_EVERY = 5   # seconds between a web process's snapshots
SNAPSHOT_TTL = 20    # seconds a snapshot outlives its process


def process_label():
    return f"{socket.gethostname()}:{os.getpid()}"



SERVER_FIGURES = {"connections_refused": "refused", "handshakes_waited": "slot_waits",  # admission.py
                  "handshakes_expired": "slot_expiries", "connections_silent": "silent",
                  "connections_evicted": "evicted"}


class Figures:
    """A web process's metrics state, made with its services (app/services.py):
    ``registry``, what ``/metrics`` reads (Herald's collector and each package's:
    :func:`register`); ``recent``, the last window of :func:`_recent`; and
    ``server``, the HTTP server whose connection figures it reports, given by
    whoever serves the app once it is made (wsgi.serve; None in a process that
    does not serve, as the CLI's and the tests')."""

    def __init__(self):
        self.registry = CollectorRegistry(auto_describe=False)
        self.recent = None
        self.server = None


def web_snapshot(services):
    """This web process's figures, as plain numbers (``services``: app/services.py's)."""
    sio, relay, streams = services.sio, services.relay, services.streams
    return {
        "connected_clients": len(sio.eio.sockets),
        "deliveries": sio.fanout.deliveries,
        "notifications_relayed": relay.delivered,
        "redis_reconnects": relay.follower.reconnects,
        "relay_connected": int(relay.follower.connected),
        "slow_client_disconnects": sio.slow_disconnects,
        "abusive_disconnects": sio.abusive_disconnects,
        "join_timeouts": sio.join_timeouts,
        **{name: getattr(services.metrics.server, attr, 0) for name, attr in SERVER_FIGURES.items()},
        # A reconnect storm (app/realtime/storm.py): connects told to retry later, replays.
        **services.bounds.figures(),
        "sse_streams": len(streams),
        "sse_deliveries": streams.delivered,
        "sse_shed": streams.shed,
        "sse_direct": streams.written,
        "batch_size": sio.fanout.batch_sizes.state(),
        "relay_lag": relay.lag.state(),
        **_recent(services.metrics, sio.fanout.deliveries + streams.delivered, relay.lag),
        "at": time.time(),
    }


RECENT_MIN = 1.0  # seconds: a window shorter than this keeps the last figures


def _recent(figures_, deliveries, lag):
    """Deliveries a second and the relay's p99 lag (a bucket's upper bound) since
    the previous snapshot, for the operations console: totals since start hide
    what happens now."""
    now = time.monotonic()
    last = figures_.recent
    if last is not None and now - last["t"] < RECENT_MIN:
        return last["figures"]
    figures = {"deliveries_per_second": 0.0, "relay_lag_p99": None, "relay_lag_p99_over": False}
    if last is not None:
        figures["deliveries_per_second"] = round((deliveries - last["deliveries"]) / (now - last["t"]), 1)
        counts = [a - b for a, b in zip(lag.counts, last["lag"], strict=True)]
        total = sum(counts)
        if total:
            running = 0
            for bound, count_ in zip([*lag.bounds, None], counts, strict=True):
                running += count_
                if running >= 0.99 * total:
                    # Past the last bound: that bound, flagged as "more than".
                    figures["relay_lag_p99"] = bound if bound is not None else lag.bounds[-1]
                    figures["relay_lag_p99_over"] = bound is None
                    break
    figures_.recent = {"t": now, "deliveries": deliveries, "lag": list(lag.counts),
                       "figures": figures}
    return figures


def save_snapshot(services):
    services.redis.set(WEB_PREFIX + process_label(), orjson.dumps(web_snapshot(services)),
                       ex=SNAPSHOT_TTL)


def keep_snapshots(services, running):
    """Save this process's snapshot every SNAPSHOT_EVERY seconds while ``running()``."""
    while running():
        try:
            save_snapshot(services)
        except UNAVAILABLE:
            pass  # Redis away: the relay reports that; try again next round
        time.sleep(SNAPSHOT_EVERY)
