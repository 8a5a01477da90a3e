"""The JSON API: publish and read notifications, and the health check.

Importing the package registers every route module on ``bp`` (blueprint.py).
"""
from app.web.api import (  # noqa: F401
    console,
    digests,
    errors,
    feed,
    matching,
    routes,
    spark,
    stream,
    topics,
    webhooks,
)
from app.web.api.blueprint import bp

__all__ = ["bp"]
