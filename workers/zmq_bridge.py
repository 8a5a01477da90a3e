"""The ZeroMQ bridge: brokerless publishers in, any subscriber out.

    python -m workers.zmq_bridge                      # run it (make run starts it)
    python -m workers.zmq_bridge keygen DIR --name N  # make a CURVE key pair

Wire format (DESIGN.md, binding):
- fire-and-forget: PUSH -> PULL ``BRIDGE_PULL`` (tcp://127.0.0.1:5557), two
  frames ``[topic, json_envelope_without_id_ts]``;
- confirmed: REQ/DEALER -> ROUTER ``BRIDGE_ROUTER`` (tcp://127.0.0.1:5559), one
  frame of JSON; reply ``{"ok": true, "id": ID}`` or ``{"ok": false, "error": …}``;
- egress: XPUB ``BRIDGE_XPUB`` (tcp://127.0.0.1:5558), every notification as
  ``[topic, origin, json_envelope]``.

Redis is ``REDIS_URL`` (or make run's private one). See workers/bridge/ for
the parts and workers/bridge/settings.py for every setting; the helpers for
peers are in workers/zmq_peers.py.
"""
import argparse
import logging
import os
import signal
import sys

import zmq

from app.bus import DEFAULT_HISTORY_MAX, Bus
from app.config import redis_url
from app.redis_client import connect

from .bridge import security
from .bridge.egress import Egress
from .bridge.ingest import Ingest
from .bridge.settings import Settings

log = logging.getLogger("herald.bridge")


def run():
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings.from_env()
    curve = security.Curve(settings)
    context = zmq.Context()
    curve.start(context)
    url = redis_url()
    history_max = int(os.environ.get("HISTORY_MAX") or DEFAULT_HISTORY_MAX)
    try:
        ingest = Ingest(context, settings, Bus(connect(url), history_max), curve.secure)
        egress = Egress(context, settings, connect(url), url, curve.secure)
    except zmq.ZMQError as exc:
        curve.stop()
        raise SystemExit(f"zmq bridge: cannot bind ({exc}); endpoints {settings.endpoints()} "
                         "(set BRIDGE_PULL, BRIDGE_ROUTER, BRIDGE_XPUB)") from None
    running = [True]

    def stop(*_):
        running.clear()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    egress.start()
    log.info("listening: PULL %s, ROUTER %s, XPUB %s", settings.pull, settings.router, settings.xpub)
    try:
        ingest.run(lambda: bool(running))
    finally:
        ingest.close(seconds=5)
        egress.stop()
        egress.join(5)
        curve.stop()
        context.term()
        log.info("stopped; %s", dict(ingest.counters, egress_sent=egress.sent))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m workers.zmq_bridge",
                                     description="Herald's ZeroMQ bridge.")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("run", help="run the bridge (the default)")
    keys = commands.add_parser("keygen", help="make a CURVE key pair (NAME.key, NAME.key_secret)")
    keys.add_argument("folder")
    keys.add_argument("--name", default="server")
    args = parser.parse_args(argv)
    if args.command == "keygen":
        public, secret = security.keygen(args.folder, args.name)
        print(f"public key: {public}\nsecret key: {secret}")
        return 0
    run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
