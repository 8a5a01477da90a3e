"""The webhook tests' fixture that needs no worker process (tests/helpers/webhooks.py)."""
from tests.helpers.webhooks import allow_loopback  # noqa: F401  (a fixture)
