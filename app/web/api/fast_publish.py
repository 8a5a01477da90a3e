"""``POST /api/notifications`` by a remembered API key, answered without Flask's machinery.

Most REST publishes are one kind of request: an API key this process has seen
valid, a JSON body of a few hundred bytes, a valid envelope. Through Flask such
a request built a request context, opened a session, ran the limiter's filter,
the CSRF hook, the routing, the view's guard, ``jsonify`` and a Response object
with its hooks: over half of the web process's CPU per publish, more than the
publish itself (bench/rest_publish.py, beside its floor).

:class:`FastPublish` sits in front of Flask (behind the host check, Socket.IO's
middleware and ProxyFix, which all still see it) and answers that request
itself, with every check the view makes and the same call to the Bus:

- the API key: remembered by this process (app/web/auth/api_keys.py) and handed
  to the publish script as a credential, which writes nothing unless the key
  still names its holder, in its atomic step: a revoked key is refused by the
  next publish, as through the view;
- the key's rate limit: the same Quota (app/web/publish_quota.py), counted by
  the script;
- the body: declared ``application/json``, of a known length within
  MAX_CONTENT_LENGTH, read by strict_json as Flask's JSON provider reads it;
- ``Idempotency-Key``, scoped to the key as the view scopes it;
- the envelope: validated by the Bus, as for every publisher.

It answers only a publish that was stored (or replayed under its idempotency
key): 201, the view's body, ``Idempotent-Replayed``, ``X-Correlation-ID`` and
the security headers (app/web/security.py), after the same wait for this
process's relay and then the same log line. Everything else goes to Flask as it came
(the body, once read, given back as it was): a key not remembered, a session or
a token, a chunked or large or non-JSON body, a bad header or envelope, and any
request with an ``Origin`` (a browser's: Flask's CORS answers it, for the origins
SOCKETIO_ORIGINS lists; programs send none). Those
are refused by the view before any Redis write, as before. A publish that the
script refused (revoked key, rate limit, an idempotency key reused for another
notification) or that failed (Redis unreachable) is handed to Flask too, with
its outcome under :data:`OUTCOME` in the environ: the view answers that outcome
(routes.py, ``_publishing``) instead of publishing again, so every refusal is
answered by one piece of code, as before. (A client cannot set an environ key
like that one: its headers arrive as ``HTTP_*``.)
"""
import io
import logging
import re
import uuid

import orjson

from app.ops import logs
from app.stream import strict_json
from app.stream.envelope import EnvelopeError
from app.stream.publish_checks import Credential
from app.users import accounts
from app.web import publish_quota, security

PATH = "/api/notifications"
ENDPOINT = "api.publish"  # the view's endpoint: the quota's keys name it
OUTCOME = "herald.publish.outcome"  # an exception the view raises in place of publishing
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")  # an Idempotency-Key header the views take

log = logging.getLogger("herald.api")


class FastPublish:
    """WSGI middleware over ``app``'s Flask ``wsgi_app``; see the module."""

    def __init__(self, app, wsgi_app):
        self.app, self.wsgi_app = app, wsgi_app
        self.headers = list(security.HEADERS.items())
        if app.config["SESSION_COOKIE_SECURE"]:
            self.headers.append(("Strict-Transport-Security", security.HSTS))

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") != PATH or environ.get("REQUEST_METHOD") != "POST":
            return self.wsgi_app(environ, start_response)
        return self.publish(environ, start_response)

    def publish(self, environ, start_response):
        scheme, _, key = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
        key = key.strip()
        length = environ.get("CONTENT_LENGTH", "")
        config = self.app.config
        if (scheme.lower() != "bearer" or not key.startswith(accounts.API_KEY_PREFIX)
                or "HTTP_TRANSFER_ENCODING" in environ or "HTTP_ORIGIN" in environ
                or not length.isdigit()
                or not 0 < int(length) <= config["MAX_CONTENT_LENGTH"]
                or environ.get("CONTENT_TYPE", "").partition(";")[0].strip().lower()
                != "application/json"):
            return self.wsgi_app(environ, start_response)
        services = self.app.extensions["herald"]
        digest = accounts.api_key_digest(key)
        name = services.api_keys.remembered(digest)
        if name is None:  # looked up (and remembered) by the view's guard
            return self.wsgi_app(environ, start_response)
        raw = environ["wsgi.input"].read(int(length))
        idempotency = environ.get("HTTP_IDEMPOTENCY_KEY")
        if len(raw) != int(length) or (idempotency is not None
                                       and not IDEMPOTENCY_KEY.fullmatch(idempotency)):
            return self.to_flask(environ, start_response, raw)
        try:
            envelope = strict_json.loads(raw)
        except strict_json.JSONError:
            return self.to_flask(environ, start_response, raw)
        given = environ.get("HTTP_X_CORRELATION_ID", "")
        correlation_id = given if logs.GOOD_ID.match(given) else uuid.uuid4().hex
        logs.bind(correlation_id)
        quota = publish_quota.quota_of(config["RATELIMIT_API_KEY"], ENDPOINT,
                                       "apikey:" + digest[:32])
        scoped = None if idempotency is None else f"apikey:{name}:{idempotency}"
        try:
            published = services.bus.publish_envelope(
                envelope, scoped, Credential(accounts.api_key_record(digest), name), quota)
        except EnvelopeError:  # refused before anything was written: the view says why
            return self.to_flask(environ, start_response, raw)
        except Exception as exc:  # noqa: BLE001  (the view answers it, as its own)
            return self.to_flask(environ, start_response, raw, exc)
        replayed = published.pop("replayed", False)
        if not replayed:  # this process's clients first, then the log line (routes.py)
            services.relay.reached(published["id"])
            log.info("published %s on %s by %s", published["id"], envelope["topic"], name,
                     extra={"correlation_id": envelope.get("correlation_id")})
        body = orjson.dumps(published) + b"\n"
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        if replayed:
            headers.append(("Idempotent-Replayed", "true"))
        headers.append((logs.HEADER, correlation_id))
        start_response("201 CREATED", headers + self.headers)
        return [body]

    def to_flask(self, environ, start_response, raw, outcome=None):
        """The request, its body given back, to Flask; ``outcome``: the publish's, for
        the view to answer."""
        environ["wsgi.input"] = io.BytesIO(raw)
        if outcome is not None:
            environ[OUTCOME] = outcome
        return self.wsgi_app(environ, start_response)


def install(app):
    """Put :class:`FastPublish` in front of ``app``'s Flask ``wsgi_app`` (before the
    host check and the other middleware wrap it)."""
    app.wsgi_app = FastPublish(app, app.wsgi_app)
