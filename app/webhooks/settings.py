"""The webhook worker's settings, from the environment (see docs/webhooks.md)."""
from dataclasses import dataclass

from app.settings import get


@dataclass(frozen=True)
class Settings:
    backoff_base: float = 1.0        # seconds: the first retry waits up to this
    backoff_max: float = 3600.0      # seconds: no retry waits longer
    retry_for: float = 86400.0       # seconds after publishing that a delivery is retried
    client_error_retries: int = 3    # retries of a 4xx (or 3xx) answer before parking
    connect_timeout: float = 5.0     # seconds to connect (and finish TLS)
    timeout: float = 10.0            # seconds an attempt may take in all, connecting included
    lease: float = 10.0              # seconds the active worker's lease lasts unless renewed
    queue_max: int = 10_000          # deliveries an endpoint's queue holds (parking.py)
    parked_max: int = 10_000         # parked deliveries an endpoint keeps (parking.py)

    @classmethod
    def from_env(cls):
        """The ``WEBHOOK_*`` settings (declared in app/settings/declared.py)."""
        return cls(backoff_base=get("WEBHOOK_BACKOFF_BASE"),
                   backoff_max=get("WEBHOOK_BACKOFF_MAX"),
                   retry_for=get("WEBHOOK_RETRY_FOR"),
                   client_error_retries=get("WEBHOOK_4XX_RETRIES"),
                   connect_timeout=get("WEBHOOK_CONNECT_TIMEOUT"),
                   timeout=get("WEBHOOK_TIMEOUT"),
                   lease=get("WEBHOOK_LEASE"),  # renewed every round of the loop (~0.5 s)
                   queue_max=get("WEBHOOK_QUEUE_MAX"), parked_max=get("WEBHOOK_PARKED_MAX"))
