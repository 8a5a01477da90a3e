"""Fixtures of the webhook tests (tests/helpers/webhooks.py): real receivers on loopback and
the real webhook worker process."""
from tests.helpers.webhooks import admin_token, allow_loopback, receivers, start_worker  # noqa: F401
