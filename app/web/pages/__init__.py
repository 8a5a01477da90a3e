"""The dashboard and the other signed-in pages, the front-end libraries they load, and
the Users page with its invite links (users.py).

Importing the package registers the routes on ``bp`` (blueprint.py).
"""
from app.web.pages import routes, users  # noqa: F401
from app.web.pages.blueprint import bp

__all__ = ["bp"]
