"""Which pages may open a Socket.IO connection: Herald's own, and the host apps'."""


def origin_check(listed):
    """Engine.IO's ``cors_allowed_origins`` (a callable it offers for this): a
    browser may connect from Herald's own origin, always, and from the origins
    ``listed`` (SOCKETIO_ORIGINS: the host apps' pages).

    Herald's own origin is the request's scheme and host as the WSGI environ
    has them, that is after ProxyFix when TRUSTED_PROXIES says to believe the
    proxy's X-Forwarded-* headers (and never from those headers otherwise).
    """
    allowed = frozenset(listed)

    def allowed_origin(origin, environ):
        own = f"{environ.get('wsgi.url_scheme', 'http')}://{environ.get('HTTP_HOST', '')}"
        return origin == own or origin in allowed
    return allowed_origin
