"""Sign-in pages, tokens for Socket.IO and REST, and request authentication.

Importing the package registers the routes on ``bp`` (blueprint.py).
"""
from app.web.auth import routes  # noqa: F401
from app.web.auth.blueprint import bp

__all__ = ["bp"]
