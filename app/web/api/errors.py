"""JSON error replies for the API, so a client always gets ``{"error": "..."}``."""
import logging

from flask import jsonify, render_template, request
from werkzeug.exceptions import HTTPException, InternalServerError

from app.redis_client import UNAVAILABLE
from app.stream.publish import BusUnavailable
from app.web.api.blueprint import bp
from app.web.auth import scope
from app.web.auth.guards import Unauthorized, session_user

log = logging.getLogger(__name__)

# What a page says for an error, in the app's own frame (error.html).
PAGE_ERRORS = {
    400: ("That request was not understood", "Something in the address or the form was not "
          "what this page expects."),
    403: ("This page is not yours to see", "It is for administrators. Ask one if you need it."),
    404: ("There is nothing here", "The address may be mistyped, or what it pointed to is gone."),
    405: ("That cannot be done here", "This address does not take that kind of request."),
    413: ("That was too large", "Requests to Herald are at most 64 KiB."),
    429: ("Too many requests", "Wait a moment, then try again."),
    500: ("Something went wrong on our side", "It has been logged. Try again in a moment."),
    503: ("Herald is busy or cannot reach Redis", "Try again in a moment."),
}


def error_page(code):
    """The styled HTML page for ``code``, in the app's frame (with the nav when signed in)."""
    heading, message = PAGE_ERRORS.get(code, PAGE_ERRORS[500])
    try:
        user = session_user()
    except Exception:  # Redis away: still a page, without the nav
        user = None
    return render_template("error.html", code=code, heading=heading, message=message,
                           user=user), code


def wants_json():
    return request.path.startswith("/api/") or request.path.startswith("/auth/token")


@bp.app_errorhandler(HTTPException)
def http_error(exc):
    """API paths answer errors in JSON; pages a styled page in the app's frame."""
    if not wants_json():
        if exc.code is None or exc.code < 400 or exc.code == 401:
            return exc
        return error_page(exc.code)
    message = exc.description or exc.name
    if exc.code == 413:
        message = "request body is over 64 KiB"
    field = getattr(exc, "field", None)  # json_body.BadBody names the body
    return jsonify(error=message, **({"field": field} if field else {})), exc.code


@bp.errorhandler(Unauthorized)
def unauthorized(exc):
    return jsonify(error=str(exc)), 401, {"WWW-Authenticate": "Bearer"}


@bp.errorhandler(scope.OutOfScope)
def out_of_scope(exc):
    """A topic-limited token reaching past its topics (app/web/auth/scope.py)."""
    return jsonify(error=str(exc), field=exc.field), 403


@bp.errorhandler(BusUnavailable)
def bus_unavailable(exc):
    return _unavailable()


def _unavailable():
    return jsonify(error="Redis is unreachable; the request was not confirmed. Try again "
                         "shortly (a publish: with the same Idempotency-Key, "
                         "to store it exactly once)"), 503, {"Retry-After": "1"}


for _error in UNAVAILABLE:
    bp.register_error_handler(_error, lambda exc: _unavailable())


@bp.app_errorhandler(InternalServerError)
def internal_error(exc):
    """An unhandled exception: JSON on API paths, the styled page elsewhere."""
    if wants_json():
        return jsonify(error="internal error; it has been logged"), 500
    return error_page(500)
