"""What views reach of the app: its Services (app/services.py), CSRF protection.

The services are made once in ``create_app`` and reached from views through
:func:`herald` (typed), so blueprints never build connections of their own.
"""
from flask import current_app
from flask_wtf.csrf import CSRFProtect

csrf = CSRFProtect()


def herald():
    """The current app's :class:`app.services.Services` (a NamedTuple: each field typed
    there). Not imported here: app.services imports the views' modules."""
    return current_app.extensions["herald"]


def redis():
    """The app's Redis client."""
    return herald().redis


def bus():
    """The app's Bus (see app.stream.publish)."""
    return herald().bus
