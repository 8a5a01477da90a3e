"""JSON error replies for the API, so a client always gets ``{"error": "..."}``;
pages get a styled page in Herald's frame instead.

Redis out of reach is never a 500, wherever it is met: the API answers 503
``{"error"}``, a page answers the outage page (503, needing no Redis, which
tries again by itself: static/js/views/status-banner.js), one warning is
logged, and the process's RedisWatch is told to PING at once.
"""
import functools
import logging

from flask import jsonify, render_template, request
from flask_babel import lazy_gettext as _l
from werkzeug.exceptions import HTTPException, InternalServerError

from app.redis_client import UNAVAILABLE
from app.stream.publish import BusUnavailable
from app.stream.replicated import NotReplicated
from app.web import extensions
from app.web.api.blueprint import bp
from app.web.auth import scope
from app.web.auth.guards import Unauthorized, session_user

log = logging.getLogger(__name__)

# What a page says for an error, in the app's own frame (error.html).
PAGE_ERRORS = {
    400: (_l("That request was not understood"), _l("Something in the address or the form was "
                                                    "not what this page expects.")),
    403: (_l("This page is not yours to see"), _l("It is for administrators. Ask one if you need it.")),
    404: (_l("There is nothing here"), _l("The address may be mistyped, or what it pointed to is gone.")),
    405: (_l("That cannot be done here"), _l("This address does not take that kind of request.")),
    413: (_l("That was too large"), _l("Requests to Herald are at most 64 KiB.")),
    429: (_l("Too many requests"), _l("Wait a moment, then try again.")),
    500: (_l("Something went wrong on our side"), _l("It has been logged. Try again in a moment.")),
    503: (_l("Herald is busy or cannot reach Redis"), _l("Try again in a moment.")),
}
OUTAGE = (_l("This page cannot be shown right now"), _l(
    "Herald keeps your notifications and settings in Redis, its database, which is not "
    "answering at the moment."))


def redis_watch():
    """This process's RedisWatch (app/realtime/redis_watch.py), or None."""
    relay = extensions.herald().relay
    return getattr(relay, "watch", None)


def redis_down():
    """True when this process knows Redis to be unreachable right now (no Redis call)."""
    watch = redis_watch()
    return watch is not None and watch.down


def fails_fast_while_redis_is_down(view):
    """A user's change (read state, archive, snooze, preferences) answered 503 at once
    while this process knows Redis to be unreachable, instead of after Redis's socket
    timeouts (seconds, during which the page showed the change as made). Publishing is
    left out: it retries with its idempotency key, and the watch lags a recovery by up
    to a second."""
    @functools.wraps(view)
    def checked(*args, **kwargs):
        if redis_down():
            return jsonify(error="Redis is unreachable; nothing was changed, try again "
                                 "shortly"), 503, {"Retry-After": "1"}
        return view(*args, **kwargs)
    return checked


def error_page(code):
    """The styled HTML page for ``code``, in the app's frame (with the nav when signed in)."""
    heading, message = PAGE_ERRORS.get(code, PAGE_ERRORS[500])
    user = None
    if not redis_down():  # known down: no nav, rather than a wait on Redis's timeouts
        try:
            user = session_user()
        except Exception:  # Redis away: still a page, without the nav
            user = None
    return render_template("error.html", code=code, heading=heading, message=message,
                           user=user), code


def outage_page():
    """The page a signed-in page is while Redis is unreachable: 503, in Herald's frame,
    with the status banner showing; it reads nothing from Redis, and reloads itself
    once the page can be had again (no meta refresh: axe counts one as a failure)."""
    heading, message = OUTAGE
    return render_template("error.html", code=503, heading=heading, message=message, user=None,
                           outage=True), 503, {"Retry-After": "5"}


def redis_unreachable(exc):
    """Redis out of reach, met by any view without a handler of its own: a warning, a
    PING at once, and 503 (JSON on API paths, the outage page elsewhere), never a 500."""
    log.warning("%s %s: Redis is unreachable (%s); answered 503", request.method, request.path,
                exc)
    watch = redis_watch()
    if watch is not None:
        watch.suspect()
    return _unavailable() if wants_json() else outage_page()


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
    if isinstance(exc.__cause__, NotReplicated):  # Redis answered: nothing to suspect
        return jsonify(error=f"{exc}. Try again (with the same Idempotency-Key, to store it "
                             "exactly once)"), 503, {"Retry-After": "1"}
    return api_unavailable(exc)


def api_unavailable(exc):
    """An API view met an unreachable Redis: 503 (not logged: a publisher's retries
    would fill the log), and the watch PINGs at once."""
    watch = redis_watch()
    if watch is not None:
        watch.suspect()
    return _unavailable()


def _unavailable():
    return jsonify(error="Redis is unreachable; the request was not confirmed. Try again "
                         "shortly (a publish: with the same Idempotency-Key, "
                         "to store it exactly once)"), 503, {"Retry-After": "1"}


for _error in UNAVAILABLE:
    bp.register_error_handler(_error, api_unavailable)  # the API's own views
    bp.app_errorhandler(_error)(redis_unreachable)       # every other view, pages first


@bp.app_errorhandler(InternalServerError)
def internal_error(exc):
    """An unhandled exception: JSON on API paths, the styled page elsewhere."""
    if wants_json():
        return jsonify(error="internal error; it has been logged"), 500
    return error_page(500)
