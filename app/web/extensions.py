"""Per-app shared objects: the Redis client, the publishing Bus, CSRF protection.

They are made once in ``create_app`` and reached from views through these
helpers, so blueprints never build connections of their own.
"""
from flask import current_app
from flask_wtf.csrf import CSRFProtect

csrf = CSRFProtect()


def redis():
    """The app's Redis client."""
    return current_app.extensions["herald.redis"]


def bus():
    """The app's Bus (see app.stream.publish)."""
    return current_app.extensions["herald.bus"]
