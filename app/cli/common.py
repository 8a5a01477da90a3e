"""What every command shares: Herald's Redis, and one-line errors.

Each command reports a bad argument or an unreachable Redis as a one-line
error and a non-zero exit, never a traceback.
"""
import time

import click

from app.redis_client import UNAVAILABLE
from app.users import accounts
from app.web import extensions


def redis():
    """The app's Redis client."""
    return extensions.herald().redis


def fail(message):
    """End the command with ``message`` and a non-zero exit."""
    raise click.ClickException(message)


def when(unix_time):
    """A creation time for a listing: UTC, or "-" when unknown."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(unix_time)) if unix_time else "-"


def on_redis(action, *args, **kwargs):
    """Run ``action`` on Herald's Redis; a refusal or an unreachable Redis
    becomes a one-line error."""
    try:
        return action(redis(), *args, **kwargs)
    except accounts.AccountError as exc:
        fail(str(exc))
    except UNAVAILABLE as exc:
        fail(f"Redis is unreachable: {exc}")
