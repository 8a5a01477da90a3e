"""The bridge's settings, from the environment (defaults in brackets; parsed by
app/settings, where they are declared).

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
from dataclasses import dataclass

from app.settings import get


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
        """The ``BRIDGE_*`` settings (declared in app/settings/declared.py)."""
        return cls(
            pull=get("BRIDGE_PULL"),
            router=get("BRIDGE_ROUTER"),
            xpub=get("BRIDGE_XPUB"),
            backlog=get("BRIDGE_BACKLOG"),
            batch=get("BRIDGE_BATCH"),
            confirm_timeout=float(get("BRIDGE_CONFIRM_TIMEOUT")),
            rcvhwm=get("BRIDGE_RCVHWM"),
            sndhwm=get("BRIDGE_SNDHWM"),
            curve_secret=get("BRIDGE_CURVE_SECRET"),
            curve_clients=get("BRIDGE_CURVE_CLIENTS"),
            trust_local=get("BRIDGE_TRUST_LOCAL"),
        )

    def endpoints(self):
        return [self.pull, self.router, self.xpub]
