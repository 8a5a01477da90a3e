"""The JSON API: publish and read notifications, and the health check."""
from flask import Blueprint

bp = Blueprint("api", __name__)

from app.web.api import digests, errors, feed, routes, spark, stream  # noqa: E402,F401  (registers handlers and routes on bp)
from app.web.api import webhooks  # noqa: E402,F401  (the /api/webhooks routes)
from app.web.api import console  # noqa: E402,F401  (/api/presence, /api/ops/status)
