"""The dashboard page and the front-end libraries it loads."""
from flask import Blueprint

bp = Blueprint("pages", __name__)

from app.web.pages import routes  # noqa: E402,F401  (registers the routes on bp)
