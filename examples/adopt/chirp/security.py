"""Response headers: a Content-Security-Policy that lets pages reach Herald, and no
sniffing. A page's scripts are files (no inline script or style), so CSP stays strict."""
from flask import current_app


def content_security_policy(response):
    herald = current_app.config["HERALD_URL"].rstrip("/")  # Herald: its scripts and socket
    socket = herald.replace("http", "ws", 1)                 # Herald
    response.headers["Content-Security-Policy"] = (
        f"default-src 'self'; script-src 'self' {herald}; style-src 'self'; "  # Herald
        f"connect-src 'self' {herald} {socket}; img-src 'self' data:; "        # Herald
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def init_app(app):
    app.after_request(content_security_policy)
