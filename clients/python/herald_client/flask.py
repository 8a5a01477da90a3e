"""Herald for a Flask app: live alerts, live records and job progress, set in its config.

    from herald_client.flask import Herald

    db = SQLAlchemy()
    herald = Herald()

    def create_app(config=Config):
        app = Flask(__name__)
        app.config.from_object(config)     # HERALD_URL, HERALD_API_KEY, HERALD_JWT_SECRET
        db.init_app(app)
        herald.init_app(app)               # after db: the outbox table joins db.metadata
        return app

    @herald.user_loader
    def herald_user():
        return str(current_user.id) if current_user.is_authenticated else None

    herald.track(Post, prefix="posts", refresh="timeline")    # live records, page refreshes
    herald.publish("messages.new", "New message", user=str(recipient.id))  # in any view
    with herald.job("export", user=str(current_user.id)) as job:   # in any worker
        job.progress(40)

and in a page template ``{{ herald_scripts() }}`` (and ``{{ herald_refresh("timeline") }}``
on a page that re-renders itself on a change), then ``Herald.connect(Herald.pageOptions())``.

Everything goes through a transactional outbox (herald_client/sqlalchemy.py):
``herald.publish`` inside a transaction writes its row in that transaction
(commit: published exactly once; rollback: never), outside one in a
transaction of its own, and returns at once: nothing waits for Herald, and
nothing is lost while Herald is away or after this process dies. The outbox
table lives in Flask-SQLAlchemy's ``db.metadata`` (``Herald(metadata=...)``
for another), so ``flask db migrate`` makes it; an app without
Flask-SQLAlchemy gets a SQLite file in its instance folder. The relay that
ships it starts itself (see :meth:`Herald.init_app`); ``flask herald relay``
runs it as a process of its own. In testing mode (``app.testing`` or
``HERALD_TESTING``) nothing is sent and no thread starts:
``with herald.record() as sent:`` collects what would have been published.
docs/adopt.md walks a whole app through it; the settings are in DEFAULTS.
"""
import json
import os
import signal
import threading
from contextlib import contextmanager
from urllib.parse import urljoin

import click
from flask import (
    after_this_request,
    current_app,
    g,
    has_app_context,
    has_request_context,
    jsonify,
    request,
    send_file,
    url_for,
)
from flask.cli import AppGroup
from markupsafe import Markup, escape

from . import envelope as envelopes
from . import outbox_wake
from .errors import InvalidNotification
from .jobs import Job
from .publisher import HeraldClient, retry_policy

STATIC = os.path.join(os.path.dirname(__file__), "static")
# Settings in app.config (these are the defaults); docs/adopt.md says more.
DEFAULTS = {
    "HERALD_URL": None,               # Herald as the browser reaches it (required unless testing)
    "HERALD_SERVER_URL": None,        # Herald as this app reaches it (default HERALD_URL)
    "HERALD_API_KEY": None,           # publishes
    "HERALD_JWT_SECRET": None,        # signs connection tokens (HS256) ...
    "HERALD_JWT_PRIVATE_KEY": None,   # ... or this PEM text (RS256 / ES256)
    "HERALD_JWT_AUDIENCE": None,      # when Herald has JWT_AUDIENCE
    "HERALD_JWT_ISSUER": None,        # when Herald has JWT_ISSUER
    "HERALD_TOKEN_TTL": 600,          # seconds a connection token lives
    "HERALD_TOKEN_URL": "/herald/token",  # where a page renews its token
    "HERALD_SCRIPT_URL": "/herald/herald.js",  # where this app serves herald.js
    "HERALD_TOPICS": None,            # prefixes every token is limited to
    "HERALD_OUTBOX_RELAY": True,      # this process ships the outbox (False: flask herald relay)
    "HERALD_OUTBOX_DATABASE": None,   # without Flask-SQLAlchemy: the outbox's database URL
    "HERALD_TIMEOUT": 2.0,            # seconds herald.client's calls take at most, in all
    "HERALD_APP_URL": None,           # this app's address: what a relative url= means
    "HERALD_TESTING": None,           # True/False; None follows app.testing
}


# Signs the tokens pages render in testing mode when no key is set (never a real one).
TESTING_SECRET = "herald-testing-mode-only-not-a-secret"


class Recorded(list):
    """What was published while :meth:`Herald.record` ran: envelopes (dicts), in order."""

    @property
    def topics(self):
        return [envelope["topic"] for envelope in self]


class Herald:
    """The Flask extension (``Herald(app)`` or ``Herald()`` then ``init_app(app)``).

    ``metadata``: the SQLAlchemy MetaData the outbox table joins (Flask-SQLAlchemy's
    ``db.metadata`` by default, when ``db.init_app(app)`` came first).
    """

    def __init__(self, app=None, *, metadata=None):
        self._user_loader = None
        self._metadata = metadata
        self._tracks = []  # track() calls made before init_app
        self.outbox = None  # a herald_client.sqlalchemy.Outbox, from init_app
        self.testing = False
        self._url_missing = False
        self._own_url = None  # without Flask-SQLAlchemy: the outbox's own database
        self._own_engine = None
        if app is not None:
            self.init_app(app)

    def init_app(self, app):
        """Read the settings, make the outbox (in ``db.metadata``), add the token and
        script routes, the template globals and ``flask herald``, and start the relay.

        The relay (the thread that ships the outbox) starts itself once per process:
        here when the app is made outside the ``flask`` command (gunicorn's sync,
        gthread and gevent workers, uWSGI, a worker script), else with the process's
        first request, commit or publish, and again in a process forked after it
        started (gunicorn's --preload). Never in testing mode, nor with
        ``HERALD_OUTBOX_RELAY = False`` (run ``flask herald relay`` then)."""
        for name, value in DEFAULTS.items():
            app.config.setdefault(name, value)
        config = app.config
        testing = config["HERALD_TESTING"]
        self.testing = bool(app.testing if testing is None else testing)
        # Required where the app serves or publishes (flask run included); another
        # `flask` command (db migrate, routes, shell) makes the app without it.
        command = click.get_current_context(silent=True)
        if not config["HERALD_URL"] and not self.testing \
                and (command is None or command.info_name == "run"):
            raise RuntimeError("HERALD_URL: set it to Herald's address, e.g. "
                               "http://127.0.0.1:5000 (optional in testing mode and in "
                               "flask commands other than run)")
        self._url_missing = not config["HERALD_URL"]
        config["HERALD_URL"] = config["HERALD_URL"] or "http://herald.invalid"
        server = config["HERALD_SERVER_URL"] or config["HERALD_URL"]
        secret = config["HERALD_JWT_SECRET"]
        if self.testing and not secret and not config["HERALD_JWT_PRIVATE_KEY"]:
            secret = TESTING_SECRET  # pages render in tests; their tokens go nowhere
        keys = dict(jwt_secret=secret, jwt_private_key=config["HERALD_JWT_PRIVATE_KEY"],
                    audience=config["HERALD_JWT_AUDIENCE"], issuer=config["HERALD_JWT_ISSUER"])
        # herald.client: an answer within HERALD_TIMEOUT; the relay's own keeps retrying.
        app.extensions["herald"] = HeraldClient(server, config["HERALD_API_KEY"],
                                                deadline=float(config["HERALD_TIMEOUT"]), **keys)
        self._relay_here = bool(config["HERALD_OUTBOX_RELAY"]) and not self.testing
        # The relay's: one quick retry a round, then its own backoff (rows wait meanwhile).
        self._make_outbox(app, HeraldClient(server, config["HERALD_API_KEY"],
                                            retry=retry_policy(retries=1, backoff=0.1), **keys))
        app.add_url_rule(config["HERALD_TOKEN_URL"], "herald_token", self._token_view)
        app.add_url_rule(config["HERALD_SCRIPT_URL"], "herald_script", _script_view)
        app.add_template_global(self.scripts, "herald_scripts")
        app.add_template_global(self.refresh_tag, "herald_refresh")
        app.cli.add_command(_commands(self))
        app.before_request(self._relay_running)
        if self._relay_here and click.get_current_context(silent=True) is None:
            with app.app_context():  # rows a process that died left: shipped now
                self._start_quietly(app, made_only=True)

    def _make_outbox(self, app, client):
        try:
            from .sqlalchemy import Outbox
        except ImportError:
            raise RuntimeError("herald_client.flask needs SQLAlchemy for its outbox: "
                               "pip install 'herald-client[flask]'") from None
        database = app.extensions.get("sqlalchemy")
        metadata = self._metadata if self._metadata is not None else \
            (database.metadata if database is not None else None)
        if self.outbox is None:
            self.outbox = Outbox(client, metadata=metadata)
        else:
            self.outbox.client = client
        outbox = self.outbox
        outbox.testing = self.testing
        outbox.auto_start = self._relay_here
        outbox.eager = _after_the_response if self._relay_here else None
        for args, options in self._tracks:
            outbox.track(*args, **options)
        self._tracks = []
        self._own_url = None if database is not None else _own_url(app)

    def _own(self):
        """The outbox's own database (an app without Flask-SQLAlchemy), made when first
        needed: an app that only mints tokens gets no file and no thread."""
        if self._own_engine is None:
            from sqlalchemy import create_engine
            if self._own_url.startswith("sqlite:///"):
                os.makedirs(os.path.dirname(self._own_url[len("sqlite:///"):]) or ".",
                            exist_ok=True)
            engine = create_engine(self._own_url)
            self.outbox.create_table(engine)
            self._own_engine = engine
        return self._own_engine

    def _start_quietly(self, app, made_only=False):
        """Start the relay; with ``made_only``, only when the outbox table is there (not
        before the app's migrations or ``create_all`` made it: then its first request
        or commit starts it)."""
        try:
            if made_only and self._own_url is not None and self._own_engine is None \
                    and not _exists(self._own_url):
                return  # nothing was ever queued here
            engine = self._engine()
            if made_only:
                from sqlalchemy import inspect
                if not inspect(engine).has_table(self.outbox.table.name,
                                                 schema=self.outbox.table.schema):
                    return
            self.start_relay(engine)
        except Exception as exc:  # the app still works; its first request tries again
            app.logger.warning("herald: could not start the outbox relay: %s", exc)

    def _check_order(self):
        """Flask-SQLAlchemy set up after Herald: the outbox table is not in its metadata
        (migrations would not make it; tracked commits would fail on a missing table)."""
        if self._own_url is not None and "sqlalchemy" in current_app.extensions:
            raise RuntimeError("herald.init_app(app) ran before Flask-SQLAlchemy's "
                               "db.init_app(app): call db.init_app(app) first, so that the "
                               "outbox table joins db.metadata (or give Herald(metadata=...))")

    def _relay_running(self):
        """Before a request: the relay runs in this process when it should (it ships what
        a process that died left; and again after a fork lost its thread)."""
        self._check_order()
        outbox = self.outbox
        if outbox is None or not outbox.auto_start or \
                (outbox.relay is not None and outbox.relay.running):
            return
        # An app without Flask-SQLAlchemy that never queued has nothing to ship.
        self._start_quietly(current_app, made_only=self._own_url is not None)

    # -- live data: the outbox ------------------------------------------------------------

    def track(self, model, prefix=None, data=None, title=None, user=None, refresh=None):
        """Publish ``model``'s committed changes as ``<prefix>.created|updated|deleted``
        data events, and with ``refresh`` a ``<refresh>.refresh`` per transaction (see
        :meth:`herald_client.sqlalchemy.Outbox.track`). Before or after init_app."""
        options = dict(prefix=prefix, data=data, title=title, user=user, refresh=refresh)
        if self.outbox is None:
            from .sqlalchemy import OutboxError, _check_prefix  # refuse now, not at init_app
            if prefix is None and refresh is None:
                raise OutboxError("track: give a prefix, refresh, or both")
            for what, value in (("prefix", prefix), ("refresh", refresh)):
                if isinstance(value, str):
                    _check_prefix(value, what)
            self._tracks.append(((model,), options))
            return model
        return self.outbox.track(model, **options)

    def _engine(self, engine=None):
        if engine is not None:
            return engine
        if self._own_url is not None:
            return self._own()
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
        if self.outbox is None or self.testing:
            return None
        if session is not None:
            return self.outbox.cursor(session)
        if has_request_context() and "_herald_cursor" in g:
            return g._herald_cursor  # read once a request: before its records, by the first call
        database = current_app.extensions.get("sqlalchemy")
        if database is None:
            if self._own_url is not None and not _exists(self._own_url):
                return None  # nothing was ever queued here
            cursor = self.outbox.cursor(self._engine())
        else:
            cursor = self.outbox.cursor(database.session)
        if has_request_context():
            g._herald_cursor = cursor
        return cursor

    # -- alerts ---------------------------------------------------------------------------

    def publish(self, topic, title, *, session=None, **fields):
        """Publish a notification through the outbox; returns at once, Herald or not.

        ``fields``: body, severity, data, user (a user id: private to them), url (a
        path is this app's: joined to HERALD_APP_URL, or the request's host),
        correlation_id, origin, kind. Inside a transaction of Flask-SQLAlchemy's
        session that has written something (or of ``session=``, yours to commit) the
        row joins it: published after the commit, never for a rollback. Else (or
        ``session=False``) in a transaction of its own. A field Herald would refuse
        raises :class:`~herald_client.InvalidNotification` here, naming it. For an
        answer from Herald now, use :attr:`client` (``herald.client.publish``)."""
        self._check_order()
        envelope = envelopes.check(self._linked(dict(fields, topic=topic, title=title)))
        joined = self._joinable(session)
        if joined is not None:
            self.outbox.enqueue(envelope, session=joined)
        else:
            self.outbox.enqueue(envelope, engine=None if self.testing else self._engine())

    def _joinable(self, session):
        if session is False:
            return None
        if session is not None:
            return session
        database = current_app.extensions.get("sqlalchemy") if has_app_context() else None
        if database is None:
            return None
        current = database.session
        return current if self.outbox.writing(current) else None

    def _linked(self, envelope):
        """A relative ``url`` is this app's page: made absolute, so that Herald's own
        pages (the inbox, email digests) link here and not to Herald's paths."""
        url = envelope.get("url")
        if not isinstance(url, str) or not url.startswith("/") or url.startswith("//"):
            return envelope
        base = current_app.config["HERALD_APP_URL"]
        if not base and has_request_context():
            base = request.host_url
        if not base:
            raise InvalidNotification(
                f"url: {url!r} is a path of this app, and outside a request there is no "
                "telling its address: set HERALD_APP_URL (e.g. https://app.example.com)",
                400, "url")
        return dict(envelope, url=urljoin(base.rstrip("/") + "/", url.lstrip("/")))

    def job(self, name, *, user=None, title=None, url=None, every=0.5, data=None):
        """A job's run as notifications (herald_client/jobs.py): ``with herald.job("export",
        user=uid) as job: job.progress(40)``. Each step is published in a transaction of
        its own (a job's progress is never held back by, or rolled back with, yours)."""
        return Job(lambda topic, title_, **fields: self.publish(topic, title_, session=False,
                                                                **fields),
                   name, user=user, title=title, url=url, every=every, data=data)

    @contextmanager
    def record(self):
        """``with herald.record() as sent:``: every notification this process publishes
        meanwhile (alerts at once or at their commit, tracked changes at their commit),
        as envelopes. In testing mode that is all that happens to them."""
        sent = Recorded()
        self.outbox.recorders.append(sent)
        try:
            yield sent
        finally:
            self.outbox.recorders.remove(sent)

    def user_loader(self, function):
        """Register ``function() -> user id or None``: who is signed in now. Return a
        stable id (the primary key, as a string), never a name a user can change: a
        name given up and taken by someone else would show them the old owner's
        private notifications."""
        self._user_loader = function
        return function

    @property
    def client(self):
        """The current app's :class:`~herald_client.HeraldClient`, for an answer now
        (``herald.client.publish(...)`` returns Herald's id): each call takes at most
        ``HERALD_TIMEOUT`` seconds (2), retries included, then raises Unavailable."""
        return current_app.extensions["herald"]

    def publish_many(self, notifications, *, session=None):
        """:meth:`publish` for each of ``notifications`` (dicts with topic, title, ...)."""
        for notification in notifications:
            fields = dict(notification)
            self.publish(fields.pop("topic", None), fields.pop("title", None), session=session,
                         **fields)

    def current_user(self):
        if self._user_loader is None:
            raise RuntimeError("register who is signed in with @herald.user_loader")
        user = self._user_loader()
        return None if user is None or user == "" else str(user)

    def connection_token(self, user=None, ttl=None, topics=None):
        """A token for ``user`` (the signed-in one by default), or None when nobody is."""
        user = user if user is not None else self.current_user()
        if user is None or user == "":
            return None
        config = current_app.config
        return self.client.connection_token(str(user), ttl=ttl or config["HERALD_TOKEN_TTL"],
                                            topics=topics if topics is not None else config["HERALD_TOPICS"])

    def _token_view(self):
        """``GET HERALD_TOKEN_URL``: a fresh token for the signed-in user (401 otherwise)."""
        token = self.connection_token()
        if token is None:
            return jsonify(error="not signed in"), 401, {"Cache-Control": "no-store"}
        return (jsonify(token=token, expires_in=current_app.config["HERALD_TOKEN_TTL"]), 200,
                {"Cache-Control": "no-store"})

    def scripts(self, topics=None):
        """What a page needs to connect: socket.io-client's script (from Herald), herald.js
        (from this app, so that it is there even while Herald is away: it then loads
        socket.io-client itself once Herald is back) and a JSON block (``#herald-connect``)
        with Herald's URL, a token for the signed-in user (none when signed out) and the
        URL to renew it."""
        config = current_app.config
        base = config["HERALD_URL"].rstrip("/")
        settings = {"url": base, "token": self.connection_token(topics=topics),
                    "tokenUrl": config["HERALD_TOKEN_URL"], "user": self.current_user(),
                    "lastId": self._page_cursor()}
        # Inside a script element only "</" could end it early: escape every "<".
        payload = json.dumps(settings).replace("<", "\\u003c")
        # socket.io-client is preloaded, never a blocking tag: a Herald that does not
        # answer must not hold the page's parsing (herald.js adds its script itself).
        return Markup(
            f'<link rel="preload" href="{escape(base)}/client/socket.io.js" as="script">\n'
            f'<script src="{escape(url_for("herald_script"))}"></script>\n'
            f'<script type="application/json" id="herald-connect">{payload}</script>')

    def _page_cursor(self):
        """Where the page is as of (the outbox's cursor): its first connect replays what
        was published after it, so a page loaded while Herald was away misses nothing.
        None when there is none to read (then the page starts live)."""
        try:
            return self.cursor()
        except Exception as exc:  # the page renders without it
            current_app.logger.warning("herald: no cursor for the page: %s", exc)
            return None

    def refresh_tag(self, stream):
        """``{{ herald_refresh("board") }}``: this page re-renders itself (morphed in place,
        scroll, focus and typing kept) when a transaction changes a model tracked with
        ``refresh="board"``."""
        from .sqlalchemy import _check_prefix
        _check_prefix(stream, "herald_refresh")
        return Markup(f'<meta name="herald-refresh" content="{escape(stream)}">')


def _script_view():
    """``GET HERALD_SCRIPT_URL``: herald.js, as shipped in this package."""
    return send_file(os.path.join(STATIC, "herald.js"), mimetype="text/javascript",
                     max_age=300)


def _own_url(app):
    """The outbox's database when the app has no Flask-SQLAlchemy: HERALD_OUTBOX_DATABASE,
    or a SQLite file in the app's instance folder."""
    return app.config["HERALD_OUTBOX_DATABASE"] or \
        "sqlite:///" + os.path.join(app.instance_path, "herald-outbox.sqlite3")


def _exists(url):
    """False for a SQLite file not made yet (other databases: assumed there)."""
    return not url.startswith("sqlite:///") or os.path.exists(url[len("sqlite:///"):])


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
        if herald._url_missing or herald.testing:
            raise click.ClickException("HERALD_URL is not set (or the app is in testing mode): "
                                       "the relay has no Herald to ship to")
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
