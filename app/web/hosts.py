"""Which hosts Herald serves (ALLOWED_HOSTS), and the answer to a request for another.

A request whose ``Host`` names another host is refused with 400: a page whose
name comes to resolve to Herald's address (DNS rebinding) must not reach it
from a browser. Flask's requests are checked by app/web/security.py's
HostCheck, Socket.IO's by its Engine.IO server (app/realtime/wire/engine.py);
both ask :func:`allowed_request` and answer with :func:`refuse`.
"""
import re

import orjson

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


def allowed_request(environ, allowed):
    """True for a request to an allowed host, or to a probe any host may ask."""
    return (environ.get("PATH_INFO", "") in ANY_HOST_PATHS
            or host_allowed(environ.get("HTTP_HOST", ""), allowed))


MESSAGE = "the Host header names a host this Herald does not serve (see ALLOWED_HOSTS)"


def refuse(environ, start_response):
    """The 400: JSON ``{"error", "field": "Host"}`` on API and Socket.IO paths, text
    elsewhere."""
    if environ.get("PATH_INFO", "").startswith(JSON_PATHS):
        body, kind = orjson.dumps({"error": MESSAGE, "field": "Host"}), "application/json"
    else:
        body, kind = MESSAGE.encode() + b"\n", "text/plain; charset=utf-8"
    start_response("400 Bad Request", [("Content-Type", kind), ("Content-Length", str(len(body)))])
    return [body]
