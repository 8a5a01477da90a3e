"""Rate limits (Flask-Limiter, counted in Herald's Redis so every web process shares them).

- sign-in (``POST /login``), per client address: RATELIMIT_LOGIN;
- tokens for a password (``POST /auth/token``), per client address:
  RATELIMIT_TOKEN; tokens for a signed-in page (``GET /auth/session-token``,
  which every open tab calls when it reconnects, so many at once after a
  restart, maybe from one address behind a NAT), per signed-in user:
  RATELIMIT_SESSION_TOKEN;
- every API request made with an API key, per key and view: RATELIMIT_API_KEY
  (the two publish views count it inside the publish script itself, in its
  one round trip: app/web/publish_quota.py).

Past a limit the answer is 429 with ``Retry-After`` (seconds) and, on the
JSON endpoints, ``{"error": "rate limit exceeded: ..."}``. Behind a proxy the
client address comes from X-Forwarded-For only when TRUSTED_PROXIES says so
(app/web/security.py). When Redis is unreachable the limits are kept in the
process's memory meanwhile, rather than failing the request.
"""
import hashlib

from flask import jsonify, make_response, render_template, request, session
from flask_babel import gettext
from flask_limiter import Limiter
from flask_limiter.errors import RateLimitExceeded
from flask_limiter.util import get_remote_address

from app.redis_client import parse_sentinel_url
from app.users import accounts


def storage(redis_url):
    """``(uri, options)`` for the limits library's Redis storage on ``redis_url``.

    Its spellings differ from redis-py's: ``unix://`` is ``redis+unix://``; a
    sentinel URL carries no db in its path (it goes in the options), and the
    counts are read from the master only, never from a lagging replica.
    """
    options = {"socket_connect_timeout": 2, "socket_timeout": 2}
    if redis_url.startswith("unix://"):
        return "redis+unix://" + redis_url[len("unix://"):], options
    if redis_url.startswith("redis+sentinel://"):
        _sentinels, service, db, _password = parse_sentinel_url(redis_url)
        netloc = redis_url[len("redis+sentinel://"):].split("/", 1)[0]
        return f"redis+sentinel://{netloc}/{service}", dict(options, db=db, use_replicas=False)
    return redis_url, options


def _bearer():
    header = request.headers.get("Authorization", "")
    scheme, _, credential = header.partition(" ")
    return credential.strip() if scheme.lower() == "bearer" else ""


def api_key_identity():
    """The limit's key for an API-key request: a digest, never the key itself."""
    return "apikey:" + hashlib.sha256(_bearer().encode()).hexdigest()[:32]


def not_an_api_key():
    return not _bearer().startswith(accounts.API_KEY_PREFIX)


# The views whose API-key limit the publish script counts itself (app/web/publish_quota.py).
COUNTED_BY_THE_PUBLISH = ("api.publish", "api.publish_batch")


def counted_by_the_publish():
    """A publish: the limiter leaves it alone, its script counts the key's limit."""
    return request.endpoint in COUNTED_BY_THE_PUBLISH


def limiter(config):
    """A web process's limiter (app/services.py builds it), counting in the Redis of
    ``config``; :func:`init_app` gives it its app and its limits."""
    uri, options = storage(config["REDIS_URL"])
    # No X-RateLimit-* headers on every answer: each cost two more Redis reads on every
    # request under a limit (a third of a REST publish's round trips); a 429 still says
    # Retry-After (too_many, below).
    return Limiter(get_remote_address, headers_enabled=False, swallow_errors=True,
                   in_memory_fallback_enabled=True, key_prefix="herald:limits",
                   storage_uri=uri, storage_options=options)


def init_app(app, api_blueprint, limiter):
    """Put ``limiter``'s limits on ``app``'s views.

    Runs after the blueprints are registered: the views it limits are
    replaced by their limited selves.
    """
    config = app.config
    limiter.init_app(app)
    limiter.limit(lambda: config["RATELIMIT_API_KEY"], key_func=api_key_identity,
                  exempt_when=not_an_api_key, scope="apikey")(api_blueprint)
    # A request filter, not one more exemption: the limiter then skips the publish
    # at once, without resolving its limits (a tenth of the publish's CPU).
    limiter.request_filter(counted_by_the_publish)
    views = app.view_functions
    views["auth.login"] = limiter.limit(lambda: config["RATELIMIT_LOGIN"], methods=["POST"],
                                        scope="login")(views["auth.login"])
    views["auth.token"] = limiter.limit(lambda: config["RATELIMIT_TOKEN"],
                                        scope="token")(views["auth.token"])
    views["auth.session_token"] = limiter.limit(
        lambda: config["RATELIMIT_SESSION_TOKEN"], scope="session-token",
        key_func=lambda: "user:" + str(session.get("user") or get_remote_address()),
    )(views["auth.session_token"])

    @app.errorhandler(RateLimitExceeded)
    def too_many(exc):
        return refusal(exc.description, getattr(getattr(exc, "limit", None), "limit", None))


def refusal(description, limit):
    """The 429 answer for a request past ``limit`` (a limits RateLimitItem), described
    as ``description``: JSON, or the sign-in page for the form, with Retry-After."""
    message, wait = f"rate limit exceeded: {description}", retry_after(limit)
    if request.path == "/login":  # a page, for a person: in their language
        said = gettext("Too many sign-in attempts: try again in %(seconds)s s.", seconds=wait)
        answer = make_response(render_template("login.html", username="", error=said), 429)
    else:
        answer = make_response(jsonify(error=message), 429)
    answer.headers["Retry-After"] = str(wait)
    return answer


def retry_after(limit):
    """Seconds until a refused caller may try again: at most the limit's window (the
    count starts again by then), read from the limit itself, without asking Redis."""
    try:
        return max(1, int(limit.get_expiry()))
    except (AttributeError, TypeError, ValueError):
        return 60
