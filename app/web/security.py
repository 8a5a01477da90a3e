"""Response headers that lock pages down, and trust in proxies only when configured.

The Content-Security-Policy allows scripts, styles, images and connections
from Herald's own origin only: no inline script or style, no ``eval`` (the
browser code has no ``_.template`` for that reason), no plugins. Pages may
frame only Herald's own documents (``frame-src 'self'``: the digest email
preview, which carries a policy of its own), and are never framed themselves.
``connect-src 'self'`` covers Socket.IO's websocket to the same host.
Strict-Transport-Security is sent only when the session cookie is Secure,
that is when Herald is meant to be reached over HTTPS.
"""
import io

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
