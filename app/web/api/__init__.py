"""The JSON API: publish and read notifications, and the health check.

Importing the package registers every route module on ``bp`` (blueprint.py).
"""
from app.web.api import console, digests, errors, feed, routes, spark, stream, topics, webhooks  # noqa: F401
from app.web.api.blueprint import bp

__all__ = ["bp"]
