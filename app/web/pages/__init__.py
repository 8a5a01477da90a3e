"""The dashboard page and the front-end libraries it loads.

Importing the package registers the routes on ``bp`` (blueprint.py).
"""
from app.web.pages import routes  # noqa: F401
from app.web.pages.blueprint import bp

__all__ = ["bp"]
