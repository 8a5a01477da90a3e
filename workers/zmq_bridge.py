"""The ZeroMQ bridge: brokerless publishers in, any subscriber out.

    python -m workers.zmq_bridge                      # run it (make run starts it)
    python -m workers.zmq_bridge keygen DIR --name N  # make a CURVE key pair

Wire format (binding: docs/contract.md, "ZeroMQ wire format"):
- fire-and-forget: PUSH -> PULL ``BRIDGE_PULL`` (tcp://127.0.0.1:5557), two
  frames ``[topic, json_envelope_without_id_ts]``;
- confirmed: REQ/DEALER -> ROUTER ``BRIDGE_ROUTER`` (tcp://127.0.0.1:5559), one
  frame of JSON; reply ``{"ok": true, "id": ID}`` or ``{"ok": false, "error": …}``;
- egress: XPUB ``BRIDGE_XPUB`` (tcp://127.0.0.1:5558), every notification as
  ``[topic, origin, json_envelope]``.

Redis is ``REDIS_URL`` (or make run's private one). See workers/bridge/ for
the parts and workers/bridge/settings.py for every setting; the helpers for
peers are in clients/python/herald_client/zmq.py.

Several bridges may run against one Redis (on two hosts, or on one with
endpoints of their own): each ingests what its peers send it (each batch is
written in one step under a batch key of its own, so two bridges never
store one message twice nor lose one to the other), each serves egress of
everything published, and each reports its own backlog
(``herald_bridge_backlog{instance}``). What a bridge holds in its backlog
when it dies is lost with it, as with one bridge; a confirmed publish that
a dying bridge never answered may be retried on another, and is then stored
twice if the first had stored it (ZeroMQ ingest has no idempotency key).
Each bridge beats in ``herald:workers:beats`` (role ``bridge``) until it stops.
"""
import argparse
import logging
import signal
import sys

import zmq

from app.key_layout import connect
from app.ops import logs, processes
from app.ops.heartbeats import Heartbeat
from app.settings import history_max, redis_url
from app.stream.publish import Bus, durability
from workers.bridge import security
from workers.bridge.egress import Egress, EgressProcess
from workers.bridge.ingest import Ingest
from workers.bridge.settings import Settings

log = logging.getLogger("herald.bridge")


def _logging():
    logs.configure()


def _on_stop(callback):
    signal.signal(signal.SIGTERM, lambda *_: callback())
    signal.signal(signal.SIGINT, lambda *_: callback())


def _cannot_bind(exc, settings):
    return SystemExit(f"zmq bridge: cannot bind ({exc}); endpoints {settings.endpoints()} "
                      "(set BRIDGE_PULL, BRIDGE_ROUTER, BRIDGE_XPUB)")


def _details(ingest, settings):
    """What the heartbeat shows (read from its thread: plain attribute reads)."""
    return {"backlog": ingest._backlog_size(), "endpoints": settings.endpoints(),
            "received": ingest.counters["received"], "stored": ingest.counters["stored"]}


def run():
    """The bridge: ingest here, egress in a child process."""
    _logging()
    settings = Settings.from_env()
    curve = security.Curve(settings)
    context = zmq.Context()
    curve.start(context)
    try:
        bus = Bus(connect(redis_url()), history_max(), durability())
        ingest = Ingest(context, settings, bus, curve.secure)
    except zmq.ZMQError as exc:
        curve.stop()
        raise _cannot_bind(exc, settings) from None
    egress = EgressProcess()
    try:
        egress.start()
    except SystemExit:
        ingest.close(0)
        curve.stop()
        raise
    running = [True]
    _on_stop(running.clear)
    beat = Heartbeat(ingest.bus.client, "bridge", lambda: _details(ingest, settings)).start()
    log.info("listening: PULL %s, ROUTER %s, XPUB %s", settings.pull, settings.router, settings.xpub)
    try:
        ingest.run(lambda: bool(running))
    finally:
        ingest.close(seconds=5)
        beat.stop()
        egress.stop()
        curve.stop()
        context.term()
        log.info("stopped; %s", dict(ingest.counters))


def run_egress():
    """The egress child: follow Redis, send on XPUB; says "ready" once bound."""
    processes.die_with_parent()
    _logging()
    settings = Settings.from_env()
    curve = security.Curve(settings)
    context = zmq.Context()
    curve.start(context)
    url = redis_url()
    try:
        egress = Egress(context, settings, connect(url), url, curve.secure)
    except zmq.ZMQError as exc:
        curve.stop()
        raise _cannot_bind(exc, settings) from None
    _on_stop(egress.stop)
    print("ready", flush=True)
    try:
        egress.run()
    finally:
        curve.stop()
        context.term()
        log.info("egress stopped; sent %d", egress.sent)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m workers.zmq_bridge",
                                     description="Herald's ZeroMQ bridge.")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("run", help="run the bridge (the default)")
    commands.add_parser("egress", help=argparse.SUPPRESS)  # the child the bridge starts
    keys = commands.add_parser("keygen", help="make a CURVE key pair (NAME.key, NAME.key_secret)")
    keys.add_argument("folder")
    keys.add_argument("--name", default="server")
    args = parser.parse_args(argv)
    if args.command == "keygen":
        public, secret = security.keygen(args.folder, args.name)
        print(f"public key: {public}\nsecret key: {secret}")
        return 0
    if args.command == "egress":
        run_egress()
    else:
        run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
