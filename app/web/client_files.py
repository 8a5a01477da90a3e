"""``/client/*``: Herald's browser client, for pages on Herald's origin and on others.

``/client/herald.js`` is the client library (clients/js/herald.js),
``/client/socket.io.js`` the socket.io-client it needs, and
``/client/idiomorph.js`` the Idiomorph it morphs a page with when the page
refreshes from a stream (herald.js loads it when first needed); the last two
from node_modules. All are public code, like a CDN's: any page may load them,
so they go out with ``Cross-Origin-Resource-Policy: cross-origin`` (every
other response of Herald's is ``same-origin``) and
``Access-Control-Allow-Origin: *``, which also lets a page load them with
``crossorigin`` (subresource integrity).

Cross-origin API calls (the client's REST reads with a bearer token) are
allowed, with flask-cors, for ``SOCKETIO_ORIGINS`` only, never with
cookies: a page elsewhere speaks for its user through a token, not through
a Herald session.
"""
from flask import Blueprint, abort, send_from_directory
from flask_cors import CORS

from app.settings import ROOT

bp = Blueprint("client", __name__)

FILES = {
    "herald.js": (ROOT / "clients" / "js", "herald.js"),
    "socket.io.js": (ROOT / "node_modules" / "socket.io-client" / "dist", "socket.io.min.js"),
    "idiomorph.js": (ROOT / "node_modules" / "idiomorph" / "dist", "idiomorph.min.js"),
}
MAX_AGE = 300  # seconds; revalidated by ETag after that
# The API a page on another origin uses: its user's feed, read state and stream.
CROSS_ORIGIN_API = r"/api/(notifications|read-state|stream)"


@bp.get("/client/<name>")
def client_file(name):
    if name not in FILES:
        abort(404)
    folder, filename = FILES[name]
    response = send_from_directory(folder, filename, max_age=MAX_AGE,
                                   mimetype="text/javascript")
    response.headers["Cross-Origin-Resource-Policy"] = "cross-origin"
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


def init_app(app):
    """Serve ``/client/*`` and answer cross-origin API calls from SOCKETIO_ORIGINS."""
    app.register_blueprint(bp)
    origins = app.config["SOCKETIO_ORIGINS"]
    if origins:
        CORS(app, resources={CROSS_ORIGIN_API: {"origins": origins}},
             methods=["GET", "POST"], supports_credentials=False, max_age=600,
             allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
             expose_headers=["Retry-After"])
