"""Herald: real-time notifications for Flask, relayed over Socket.IO.

``create_app(config)`` builds the web app: Redis client and Bus, blueprints
(auth, api, pages), CLI commands, and the Socket.IO server mounted in front
of the Flask app. The relay (one Redis subscription per process) is started
by whoever serves the app, see ``wsgi.serve``.

Importing the package costs nothing: workers, the ZeroMQ bridge and Spark
jobs use ``app.bus`` and ``app.notifications`` without loading Flask.
"""


def create_app(config=None):
    """Build a Herald app from ``config`` (a Config; from the environment by default)."""

    from flask import Flask

    from . import cli, extensions, logs, rate_limits, security
    from .api import bp as api_bp
    from .auth import bp as auth_bp
    from .bus import Bus
    from .config import ROOT, Config
    from .ops import bp as ops_bp
    from .pages import bp as pages_bp
    from .realtime import init_app as init_realtime
    from .redis_client import connect

    config = config or Config()
    app = Flask(__name__, static_folder=str(ROOT / "static"),
                template_folder=str(ROOT / "templates"))
    app.config.from_object(config)
    logs.configure()

    client = connect(app.config["REDIS_URL"])
    app.extensions["herald.redis"] = client
    app.extensions["herald.bus"] = Bus(client, app.config["HISTORY_MAX"])
    extensions.csrf.init_app(app)
    security.init_app(app)
    logs.init_app(app)

    app.register_blueprint(auth_bp)
    app.register_blueprint(api_bp)
    app.register_blueprint(pages_bp)
    app.register_blueprint(ops_bp)
    extensions.csrf.exempt(api_bp)
    rate_limits.init_app(app, api_bp)

    init_realtime(app)
    security.trust_proxies(app)
    cli.init_app(app)
    return app
