"""Sign-in pages, tokens for Socket.IO and REST, and request authentication."""
from flask import Blueprint

bp = Blueprint("auth", __name__)

from app.web.auth import routes  # noqa: E402,F401  (registers the routes on bp)
