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
- ``HERALD_TOPICS``: when set, the topic prefixes every token is limited to;
- ``HERALD_OUTBOX_RELAY``: with tracked models (below), whether this process
  runs the outbox relay (True: started on the first commit that writes outbox
  rows, or by :meth:`Herald.start_relay`); False when ``flask herald relay``
  runs it as a process of its own.

Live data from your database (needs ``pip install './clients/python[sqlalchemy]'``)::

    herald.track(Card, prefix="board.card", data=lambda card: {...})

Every commit that inserts, updates or deletes a Card publishes
``board.card.created|updated|deleted`` (``kind: "data"``) through a
transactional outbox (herald_client/sqlalchemy.py): exactly once, in commit
order, never for a rollback, and still after Herald was away or this process
died. ``herald.cursor()``, read before a page's records, is what the page
passes to ``Herald.sync(..., {since: cursor})``. ``flask herald relay``
ships the outbox on its own (``--once``: what is pending, then exit).
"""
import json
import signal
import threading

import click
from flask import after_this_request, current_app, has_request_context, jsonify
from flask.cli import AppGroup
from markupsafe import Markup, escape

from . import outbox_wake
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
    "HERALD_OUTBOX_RELAY": True,
}


class Herald:
    """The Flask extension (``Herald(app)`` or ``Herald()`` then ``init_app(app)``)."""

    def __init__(self, app=None):
        self._user_loader = None
        self.outbox = None  # a herald_client.sqlalchemy.Outbox, once a model is tracked
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
        self._client = client
        self._relay_here = bool(config["HERALD_OUTBOX_RELAY"])
        if self.outbox is not None:
            self._wire_outbox()
        app.cli.add_command(_commands(self))
        app.before_request(self._relay_running)

    def _relay_running(self):
        """Before a request: the relay runs in this process when it should (it ships what
        a process that died left, with no commit needed to start it; and again after a
        fork lost its thread)."""
        outbox = self.outbox
        if outbox is None or not outbox.auto_start or "sqlalchemy" not in current_app.extensions \
                or (outbox.relay is not None and outbox.relay.running):
            return
        try:
            self.start_relay()
        except Exception as exc:  # the page still works; the next request tries again
            current_app.logger.warning("herald: could not start the outbox relay: %s", exc)

    # -- live data: the outbox ------------------------------------------------------------

    def track(self, model, prefix, data=None, title=None, user=None):
        """Publish ``model``'s committed changes as ``<prefix>.created|updated|deleted``
        data events, through the outbox (see :meth:`herald_client.sqlalchemy.Outbox.track`)."""
        if self.outbox is None:
            from .sqlalchemy import Outbox  # only apps that track need SQLAlchemy
            self.outbox = Outbox()
            if getattr(self, "_client", None) is not None:
                self._wire_outbox()
        return self.outbox.track(model, prefix, data=data, title=title, user=user)

    def _wire_outbox(self):
        self.outbox.client = self._client
        self.outbox.auto_start = self._relay_here
        self.outbox.eager = _after_the_response if self._relay_here else None

    def _engine(self, engine):
        if engine is not None:
            return engine
        database = current_app.extensions.get("sqlalchemy")
        if database is None:
            raise RuntimeError("give the engine, or set up Flask-SQLAlchemy before Herald")
        return database.engine

    def start_relay(self, engine=None):
        """Start this process's outbox relay now (it ships what earlier processes left);
        ``engine``: Flask-SQLAlchemy's by default (inside an app context)."""
        return self.outbox.start(self._engine(engine))

    def cursor(self, session=None):
        """The Herald id to render with a page's records: call it before reading them.
        ``session``: Flask-SQLAlchemy's ``db.session`` by default."""
        if self.outbox is None:
            return None
        if session is None:
            session = current_app.extensions["sqlalchemy"].session
        return self.outbox.cursor(session)

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


def _after_the_response(outbox, engine, batch):
    """A commit inside a request: its rows are published by the request's own thread once
    the response is sent (``call_on_close``), where the relay's thread would wait for the
    GIL while the view finishes (werkzeug, gunicorn's threads). Outside a request, or
    when the response was already made, False: the relay does it."""
    if not has_request_context():
        return False
    try:
        @after_this_request
        def ship_when_sent(response):
            response.call_on_close(lambda: outbox.ship_now(engine, batch))
            return response
    except (AssertionError, RuntimeError):  # too late in this request for that
        return False
    return True


def _commands(herald):
    """``flask herald relay``: the outbox relay as a process of its own."""
    group = AppGroup("herald", help="Herald: the outbox relay.")

    @group.command("relay")
    @click.option("--once", is_flag=True, help="Ship what is pending, say how many, and exit.")
    @click.option("--poll", default=1.0, show_default=True,
                  help="Seconds between looks for committed rows (on PostgreSQL and "
                       "SQLite each commit also wakes it at once).")
    def relay(once, poll):
        """Ship the outbox's committed rows to Herald, in order, until stopped."""
        if herald.outbox is None:
            raise click.ClickException("no model is tracked: call herald.track(Model, prefix=...) "
                                       "in your app first")
        engine = herald._engine(None)
        herald.outbox.create_table(engine)
        if once:
            click.echo(f"shipped {herald.outbox.relay_once(engine)} outbox rows")
            herald.outbox.prune(engine)
            return
        herald.outbox.poll = poll
        done = threading.Event()
        for name in ("SIGINT", "SIGTERM"):
            signal.signal(getattr(signal, name), lambda *_: done.set())
        herald.outbox.start(engine)
        woken = "any process commits" if outbox_wake.watcher(engine) else "this process commits"
        click.echo(f"herald relay: shipping {herald.outbox.table.name} every {poll} s "
                   f"(and at once when {woken}); Ctrl+C stops")
        done.wait()
        herald.outbox.stop()

    return group
