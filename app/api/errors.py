"""JSON error replies for the API, so a client always gets ``{"error": "..."}``."""
from flask import jsonify, request
from werkzeug.exceptions import HTTPException

from ..auth.guards import Unauthorized
from ..bus import BusUnavailable
from ..redis_client import UNAVAILABLE
from . import bp


def wants_json():
    return request.path.startswith("/api/") or request.path.startswith("/auth/token")


@bp.app_errorhandler(HTTPException)
def http_error(exc):
    """API paths answer errors in JSON; pages keep Flask's HTML error pages."""
    if not wants_json():
        return exc
    message = exc.description or exc.name
    if exc.code == 413:
        message = "request body is over 64 KiB"
    return jsonify(error=message), exc.code


@bp.errorhandler(Unauthorized)
def unauthorized(exc):
    return jsonify(error=str(exc)), 401, {"WWW-Authenticate": "Bearer"}


@bp.errorhandler(BusUnavailable)
def bus_unavailable(exc):
    return _unavailable()


def _unavailable():
    return jsonify(error="Redis is unreachable; the request was not confirmed. Try again "
                         "shortly (a publish: with the same Idempotency-Key, "
                         "to store it exactly once)"), 503, {"Retry-After": "1"}


for _error in UNAVAILABLE:
    bp.register_error_handler(_error, lambda exc: _unavailable())
