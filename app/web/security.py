"""Response headers that lock pages down, and trust in proxies only when configured.

The Content-Security-Policy allows scripts, styles, images and connections
from Herald's own origin only: no inline script or style, no ``eval`` (the
browser code has no ``_.template`` for that reason), no plugins. Pages may
frame only Herald's own documents (``frame-src 'self'``: the digest email
preview, which carries a policy of its own), and are never framed themselves.
``connect-src 'self'`` covers Socket.IO's websocket to the same host.
Strict-Transport-Security is sent only when the session cookie is Secure,
that is when Herald is meant to be reached over HTTPS.

:class:`HostCheck` refuses a request whose ``Host`` is not in ``ALLOWED_HOSTS``
(DNS rebinding: a page of evil.example whose name comes to resolve to 127.0.0.1
would otherwise reach Herald's unauthenticated endpoints from the user's browser).
"""
import io
import re

import orjson
from flask import abort, current_app, request
from werkzeug.middleware.proxy_fix import ProxyFix

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "frame-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])

HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}


def init_app(app):
    """Add the headers to every response; hold chunked bodies to the size limit."""
    hsts = app.config["SESSION_COOKIE_SECURE"]
    # First of all before-request hooks: nothing may have read the body yet.
    app.before_request_funcs.setdefault(None, []).insert(0, _whole_chunked_body)

    @app.after_request
    def secure_headers(response):
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        if hsts:
            response.headers.setdefault("Strict-Transport-Security", "max-age=31536000")
        return response


def _whole_chunked_body():
    """A chunked request body is read here, whole, up to MAX_CONTENT_LENGTH: one
    larger is refused with 413. (Werkzeug would cut it at the limit silently, and
    the view would see a body that ends mid-way: a misleading 400.)"""
    environ = request.environ
    if "chunked" not in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
        return None
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    body = environ["wsgi.input"].read(limit + 1)
    if len(body) > limit:
        abort(413)
    # From here on a plain body of known length (Werkzeug ignores Content-Length
    # beside Transfer-Encoding: chunked, so that goes).
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    environ.pop("wsgi.input_terminated", None)
    return None


def trust_proxies(app):
    """With TRUSTED_PROXIES = N, take the client's address, scheme and host from the
    last N proxies' X-Forwarded-* headers (rate limits are per client address).
    Called last, so that it wraps Socket.IO's requests too."""
    proxies = app.config["TRUSTED_PROXIES"]
    if proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies)


# A Host header: a name or an IPv4 address, or an IPv6 one in brackets; an optional port.
HOST_HEADER = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::[0-9]{1,5})?")
# Probes a load balancer sends by address, whatever names Herald has: they tell
# whether to send traffic and nothing else. /metrics is not one (it has figures).
ANY_HOST_PATHS = frozenset({"/healthz", "/readyz"})
JSON_PATHS = ("/api/", "/auth/token", "/socket.io/")


def host_allowed(header, allowed):
    """True when ``header`` (a Host header) names a host in ``allowed`` (lower-case
    names; ``*.example.com`` for its subdomains, ``*`` for any host)."""
    match = HOST_HEADER.fullmatch(header.lower())
    if match is None:
        return False
    name = match.group(1).strip("[]").rstrip(".")
    return any(pattern == "*" or name == pattern
               or (pattern.startswith("*.") and name.endswith(pattern[1:]))
               for pattern in allowed)


class HostCheck:
    """WSGI middleware in front of Flask and Socket.IO alike: 400 for a request whose
    Host is not allowed (JSON ``{"error", "field": "Host"}`` on API and Socket.IO
    paths, plain text elsewhere), except the health probes."""

    def __init__(self, wsgi_app, allowed):
        self.wsgi_app, self.allowed = wsgi_app, tuple(allowed)

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path in ANY_HOST_PATHS or host_allowed(environ.get("HTTP_HOST", ""), self.allowed):
            return self.wsgi_app(environ, start_response)
        message = "the Host header names a host this Herald does not serve (see ALLOWED_HOSTS)"
        if path.startswith(JSON_PATHS):
            body, kind = orjson.dumps({"error": message, "field": "Host"}), "application/json"
        else:
            body, kind = message.encode() + b"\n", "text/plain; charset=utf-8"
        start_response("400 Bad Request", [("Content-Type", kind),
                                           ("Content-Length", str(len(body)))])
        return [body]


def check_hosts(app):
    """Refuse requests for other hosts (ALLOWED_HOSTS). Called after Socket.IO is
    mounted, so that it covers /socket.io/, and before trust_proxies, so that the
    host checked is the forwarded one when proxies are trusted."""
    if "*" not in app.config["ALLOWED_HOSTS"]:
        app.wsgi_app = HostCheck(app.wsgi_app, app.config["ALLOWED_HOSTS"])
