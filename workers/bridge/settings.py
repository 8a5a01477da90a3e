"""The bridge's settings, from the environment (defaults in brackets).

- ``BRIDGE_PULL`` [tcp://127.0.0.1:5557]: fire-and-forget ingest (PULL);
- ``BRIDGE_ROUTER`` [tcp://127.0.0.1:5559]: confirmed ingest (ROUTER);
- ``BRIDGE_XPUB`` [tcp://127.0.0.1:5558]: egress (XPUB);
- ``BRIDGE_BACKLOG`` [100000]: notifications held while Redis is away;
- ``BRIDGE_BATCH`` [500]: notifications written to Redis per round trip;
- ``BRIDGE_CONFIRM_TIMEOUT`` [10]: seconds a confirmed request may wait to be
  stored before it is answered with an error (and dropped);
- ``BRIDGE_RCVHWM`` [10000] / ``BRIDGE_SNDHWM`` [10000]: ZeroMQ high-water marks
  of the ingest sockets and of each egress subscriber;
- ``BRIDGE_CURVE_SECRET`` / ``BRIDGE_CURVE_CLIENTS``: the server's secret key
  file and the folder of allowed client public keys (see ``security``);
- ``BRIDGE_TRUST_LOCAL`` [0]: 1 lets peers without CURVE keys publish and read
  private notifications (``user`` set). Without CURVE any local process can
  connect to the bridge, so by default private notifications are refused on
  ingest and withheld from egress unless peers are authenticated.
"""
import os
from dataclasses import dataclass


def _int(name, default):
    raw = os.environ.get(name)
    try:
        value = int(raw) if raw else default
    except ValueError:
        raise SystemExit(f"zmq bridge: {name} must be a whole number, not {raw!r}") from None
    if value < 1:
        raise SystemExit(f"zmq bridge: {name} must be at least 1")
    return value


def _flag(name):
    raw = os.environ.get(name, "0")
    if raw not in ("0", "1"):
        raise SystemExit(f"zmq bridge: {name} must be 1 or 0, not {raw!r}")
    return raw == "1"


@dataclass
class Settings:
    pull: str = "tcp://127.0.0.1:5557"
    router: str = "tcp://127.0.0.1:5559"
    xpub: str = "tcp://127.0.0.1:5558"
    backlog: int = 100_000
    batch: int = 500
    confirm_timeout: float = 10.0
    rcvhwm: int = 10_000
    sndhwm: int = 10_000
    curve_secret: str = ""
    curve_clients: str = ""
    trust_local: bool = False

    @property
    def private_allowed(self):
        """Whether peers may publish and read private notifications: only when they
        are authenticated (CURVE), or when BRIDGE_TRUST_LOCAL says to trust them."""
        return bool(self.curve_secret) or self.trust_local

    @classmethod
    def from_env(cls):
        env = os.environ.get
        return cls(
            pull=env("BRIDGE_PULL") or cls.pull,
            router=env("BRIDGE_ROUTER") or cls.router,
            xpub=env("BRIDGE_XPUB") or cls.xpub,
            backlog=_int("BRIDGE_BACKLOG", cls.backlog),
            batch=_int("BRIDGE_BATCH", cls.batch),
            confirm_timeout=float(_int("BRIDGE_CONFIRM_TIMEOUT", int(cls.confirm_timeout))),
            rcvhwm=_int("BRIDGE_RCVHWM", cls.rcvhwm),
            sndhwm=_int("BRIDGE_SNDHWM", cls.sndhwm),
            curve_secret=env("BRIDGE_CURVE_SECRET", ""),
            curve_clients=env("BRIDGE_CURVE_CLIENTS", ""),
            trust_local=_flag("BRIDGE_TRUST_LOCAL"),
        )

    def endpoints(self):
        return [self.pull, self.router, self.xpub]
