"""Request bodies in JSON, read by one rule (app/stream/strict_json.py) on every endpoint.

Flask reads a body through ``app.json`` and ``Request.get_json``; both seams
are set here. A view's ``get_json(silent=True)`` still answers ``None`` for
a body that is absent or not declared JSON (each view then says what it
wanted), but a body declared JSON and refused (nested 5,000 deep, a lone
surrogate, NaN, an integer past 64 bits, or plain malformed) is a 400
``{"error": "body: ...", "field": "body"}`` naming why: before, the standard
library's ``RecursionError`` escaped as a 500 and lossy values were stored.
"""
import flask
from flask.json.provider import DefaultJSONProvider
from werkzeug.exceptions import BadRequest

from app.stream import strict_json


class BadBody(BadRequest):
    """A JSON body Herald refuses; ``field`` is what the error reply names."""

    field = "body"


class StrictJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider, reading with strict_json (writing is unchanged)."""

    def loads(self, s, **kwargs):
        return strict_json.loads(s)


class StrictRequest(flask.Request):
    """``silent`` silences a missing or non-JSON body, never a refused JSON one."""

    def get_json(self, force=False, silent=False, cache=True):
        if silent and (force or self.is_json) and self.get_data(cache=True):
            silent = False
        return super().get_json(force=force, silent=silent, cache=cache)

    def on_json_loading_failed(self, e):
        if e is None:  # not declared JSON, and not silent: Flask's own 415
            return super().on_json_loading_failed(e)
        raise BadBody(f"body: {e}")


def init_app(app):
    app.json = StrictJSONProvider(app)
    app.request_class = StrictRequest
