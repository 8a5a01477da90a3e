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

from flask import abort, current_app, request
from werkzeug.middleware.proxy_fix import ProxyFix

from app.web import addresses, hosts

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
HSTS = "max-age=31536000"  # Strict-Transport-Security, when the session cookie is Secure


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
            response.headers.setdefault("Strict-Transport-Security", HSTS)
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
    last N proxies' X-Forwarded-* headers (rate limits are per client address), the
    address in canonical form (addresses.py: every count per address sees one
    spelling of it). Called last, so that it wraps Socket.IO's requests too."""
    proxies = app.config["TRUSTED_PROXIES"]
    if proxies:
        inner = app.wsgi_app

        def canonical_client(environ, start_response):
            addresses.client_address(environ)
            return inner(environ, start_response)
        app.wsgi_app = ProxyFix(canonical_client, x_for=proxies, x_proto=proxies, x_host=proxies)


SOCKETIO_PATH = "/socket.io/"  # where python-socketio serves (app/services.py)


def allowed_hosts(config):
    """ALLOWED_HOSTS as the checks take it: a tuple, or None for any host (``*``)."""
    hosts_ = config["ALLOWED_HOSTS"]
    return None if "*" in hosts_ else tuple(hosts_)


def upgrade_refusal(config, engine):
    """gevent-websocket's ``pre_start_hook`` (the server's: app/services.py builds it,
    wsgi.py gives it to the AdmittingServer it makes): true for a
    websocket upgrade that Herald refuses, its ``Host`` not in ALLOWED_HOSTS or its
    ``Origin`` not one Socket.IO accepts (origins.py), as the app sees them (after
    ProxyFix when TRUSTED_PROXIES says so). gevent-websocket answers ``101 Switching
    Protocols`` before the app is called, so the app's 400 (hosts.refuse, Engine.IO's
    origin check) went nowhere and the client saw a close; with the hook true the
    request is served as a plain one instead, and gets that 400.

    An upgrade of any other path than Socket.IO's is served as a plain request too:
    Flask's routes take no websocket, and Werkzeug's routing answers it 400, which
    went nowhere after a 101 as well."""
    allowed = allowed_hosts(config)  # None: any host
    origins = engine.cors_allowed_origins
    proxies = config["TRUSTED_PROXIES"]
    # ProxyFix answers what the app it wraps answers: here, the environ it rewrote.
    forwarded = ProxyFix(lambda environ, _start: environ, x_for=proxies, x_proto=proxies,
                         x_host=proxies) if proxies else None

    def refused(handler):
        environ = handler.environ
        if environ.get("HTTP_UPGRADE", "").lower() != "websocket":
            return False
        if not environ.get("PATH_INFO", "").startswith(SOCKETIO_PATH):
            return True  # no websocket here: Werkzeug's 400, not 101 and a void
        if forwarded is not None:
            environ = forwarded(dict(environ), None)
        if allowed is not None and not hosts.allowed_request(environ, allowed):
            return True
        origin = environ.get("HTTP_ORIGIN")
        return bool(origin and callable(origins) and not origins(origin, environ))
    return refused


class HostCheck:
    """WSGI middleware in front of Flask: 400 for a request whose Host is not allowed
    (hosts.py). Socket.IO's requests are checked by its Engine.IO server instead
    (app/realtime/wire/engine.py): a middleware in front of them would stay on
    every websocket's stack for its whole life, ~0.8 KiB per idle connection."""

    def __init__(self, wsgi_app, allowed):
        self.wsgi_app, self.allowed = wsgi_app, tuple(allowed)

    def __call__(self, environ, start_response):
        if hosts.allowed_request(environ, self.allowed):
            return self.wsgi_app(environ, start_response)
        return hosts.refuse(environ, start_response)


def check_hosts(app):
    """Refuse Flask's requests for other hosts (ALLOWED_HOSTS) through HostCheck
    (Socket.IO's Engine.IO server is given them when it is made: app/services.py).
    Before trust_proxies, so that the host checked is the forwarded one when
    proxies are trusted."""
    allowed = allowed_hosts(app.config)
    if allowed is not None:
        app.wsgi_app = HostCheck(app.wsgi_app, allowed)
