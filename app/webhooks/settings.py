"""The webhook worker's settings, from the environment (see docs/webhooks.md)."""
import os
from dataclasses import dataclass

from app.settings import seconds


def _number(name, default):
    value = os.environ.get(name)
    try:
        number = float(value) if value else default
    except ValueError:
        number = -1
    if number < 0:
        raise SystemExit(f"herald: {name} must be a number of 0 or more, not {value!r}")
    return number


@dataclass(frozen=True)
class Settings:
    backoff_base: float = 1.0        # seconds: the first retry waits up to this
    backoff_max: float = 3600.0      # seconds: no retry waits longer
    retry_for: float = 86400.0       # seconds after publishing that a delivery is retried
    client_error_retries: int = 3    # retries of a 4xx (or 3xx) answer before parking
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    lease: float = 10.0              # seconds the active worker's lease lasts unless renewed

    @classmethod
    def from_env(cls):
        lease = seconds("WEBHOOK_LEASE", 10.0, 3, 3600)  # renewed every round of the loop (~0.5 s)
        return cls(backoff_base=_number("WEBHOOK_BACKOFF_BASE", 1.0),
                   backoff_max=_number("WEBHOOK_BACKOFF_MAX", 3600.0),
                   retry_for=_number("WEBHOOK_RETRY_FOR", 86400.0),
                   client_error_retries=int(_number("WEBHOOK_4XX_RETRIES", 3)),
                   connect_timeout=_number("WEBHOOK_CONNECT_TIMEOUT", 5.0),
                   read_timeout=_number("WEBHOOK_TIMEOUT", 10.0),
                   lease=lease)
