"""Herald for a Flask app: publish from your views, and connect your users' pages.

    from herald_client.flask import Herald

    herald = Herald()

    def create_app():
        app = Flask(__name__)
        app.config.update(HERALD_URL="http://127.0.0.1:5000", HERALD_API_KEY="hk_...",
                          HERALD_JWT_SECRET="...the secret Herald has as JWT_SECRET...")
        herald.init_app(app)
        return app

    @herald.user_loader
    def current_user():
        return session.get("user")        # your user's name, or None when signed out

    herald.publish("board.card.updated", "Card moved", data=card)   # in any view

and in a page template, ``{{ herald_scripts() }}`` renders the two script
tags and the connection settings (Herald's URL, a freshly minted token for
the signed-in user, and where to get the next one), which the page's own
script passes on: ``Herald.connect(Herald.pageOptions())``. No inline
script, so your Content-Security-Policy can stay strict.

Settings, from ``app.config``:

- ``HERALD_URL``: Herald as the browser reaches it (required);
- ``HERALD_SERVER_URL``: Herald as this app reaches it (default ``HERALD_URL``);
- ``HERALD_API_KEY``: for publishing;
- ``HERALD_JWT_SECRET`` or ``HERALD_JWT_PRIVATE_KEY`` (PEM text): signs
  connection tokens; ``HERALD_JWT_AUDIENCE``, ``HERALD_JWT_ISSUER`` when
  Herald checks them;
- ``HERALD_TOKEN_TTL``: seconds a connection token lives (600); the page
  fetches a new one from ``HERALD_TOKEN_URL`` (``/herald/token``) before
  it expires;
- ``HERALD_TOPICS``: when set, the topic prefixes every token is limited to.
"""
import json

from flask import current_app, jsonify
from markupsafe import Markup, escape

from .publisher import HeraldClient

DEFAULTS = {
    "HERALD_SERVER_URL": None,
    "HERALD_API_KEY": None,
    "HERALD_JWT_SECRET": None,
    "HERALD_JWT_PRIVATE_KEY": None,
    "HERALD_JWT_AUDIENCE": None,
    "HERALD_JWT_ISSUER": None,
    "HERALD_TOKEN_TTL": 600,
    "HERALD_TOKEN_URL": "/herald/token",
    "HERALD_TOPICS": None,
}


class Herald:
    """The Flask extension (``Herald(app)`` or ``Herald()`` then ``init_app(app)``)."""

    def __init__(self, app=None):
        self._user_loader = None
        if app is not None:
            self.init_app(app)

    def init_app(self, app):
        for name, value in DEFAULTS.items():
            app.config.setdefault(name, value)
        if not app.config.get("HERALD_URL"):
            raise RuntimeError("HERALD_URL: set it to Herald's address, e.g. http://127.0.0.1:5000")
        config = app.config
        client = HeraldClient(
            config["HERALD_SERVER_URL"] or config["HERALD_URL"], config["HERALD_API_KEY"],
            jwt_secret=config["HERALD_JWT_SECRET"], jwt_private_key=config["HERALD_JWT_PRIVATE_KEY"],
            audience=config["HERALD_JWT_AUDIENCE"], issuer=config["HERALD_JWT_ISSUER"])
        app.extensions["herald"] = client
        app.add_url_rule(config["HERALD_TOKEN_URL"], "herald_token", self._token_view)
        app.add_template_global(self.scripts, "herald_scripts")

    def user_loader(self, function):
        """Register ``function() -> user name or None``: who is signed in now."""
        self._user_loader = function
        return function

    @property
    def client(self):
        """The current app's :class:`~herald_client.HeraldClient`."""
        return current_app.extensions["herald"]

    def publish(self, topic, title, **fields):
        """:meth:`HeraldClient.publish` with this app's settings; returns ``{"id", "ts"}``."""
        return self.client.publish(topic, title, **fields)

    def publish_many(self, notifications, **options):
        return self.client.publish_many(notifications, **options)

    def current_user(self):
        if self._user_loader is None:
            raise RuntimeError("register who is signed in with @herald.user_loader")
        return self._user_loader()

    def connection_token(self, user=None, ttl=None, topics=None):
        """A token for ``user`` (the signed-in one by default), or None when nobody is."""
        user = user or self.current_user()
        if not user:
            return None
        config = current_app.config
        return self.client.connection_token(user, ttl=ttl or config["HERALD_TOKEN_TTL"],
                                            topics=topics if topics is not None else config["HERALD_TOPICS"])

    def _token_view(self):
        """``GET HERALD_TOKEN_URL``: a fresh token for the signed-in user (401 otherwise)."""
        token = self.connection_token()
        if token is None:
            return jsonify(error="not signed in"), 401, {"Cache-Control": "no-store"}
        return (jsonify(token=token, expires_in=current_app.config["HERALD_TOKEN_TTL"]), 200,
                {"Cache-Control": "no-store"})

    def scripts(self, topics=None):
        """What a page needs to connect: the client's script tags and a JSON block
        (``#herald-connect``) with Herald's URL, a token for the signed-in user
        (none when signed out) and the URL to renew it."""
        config = current_app.config
        base = config["HERALD_URL"].rstrip("/")
        settings = {"url": base, "token": self.connection_token(topics=topics),
                    "tokenUrl": config["HERALD_TOKEN_URL"], "user": self.current_user()}
        # Inside a script element only "</" could end it early: escape every "<".
        payload = json.dumps(settings).replace("<", "\\u003c")
        return Markup(
            f'<script src="{escape(base)}/client/socket.io.js"></script>\n'
            f'<script src="{escape(base)}/client/herald.js"></script>\n'
            f'<script type="application/json" id="herald-connect">{payload}</script>')
