"""Herald: real-time notifications for Flask, relayed over Socket.IO.

``create_app(config)`` builds the web app: the long-lived objects
(app/services.py: Redis, the publishing Bus, tokens, presence, the Socket.IO
server and its namespace, the relay), the blueprints (auth, api, pages, ops),
the CLI commands, and the Socket.IO server mounted in front of the Flask app.
The relay and the background loops are started by whoever serves the app
(``wsgi.serve``), from ``services.background_loops``.

Importing the package costs nothing: workers, the ZeroMQ bridge and Spark
jobs use ``app.stream`` without loading Flask.
"""


def create_app(config=None):
    """Build a Herald app from ``config`` (a Config; from the environment by default)."""
    from flask import Flask

    from app import services
    from app.cli import commands
    from app.ops import logs
    from app.ops.probes import bp as ops_bp
    from app.settings import ROOT, Config
    from app.stream import shards
    from app.web import client_files, extensions, i18n, json_body, rate_limits, security
    from app.web.api import bp as api_bp
    from app.web.api import fast_publish
    from app.web.auth import bp as auth_bp
    from app.web.pages import bp as pages_bp
    from app.webhooks import figures as webhook_figures

    config = config or Config()
    app = Flask(__name__, static_folder=str(ROOT / "static"),
                template_folder=str(ROOT / "templates"))
    app.config.from_object(config)
    json_body.init_app(app)
    logs.configure()
    # The history's shards (STREAM_SHARDS), one number for the whole process: every
    # reader and writer of the history asks app.stream.shards.configured().
    shards.use(app.config.get("STREAM_SHARDS", 1))

    built = services.build(app.config)
    services.install(app, built)
    extensions.csrf.init_app(app)
    security.init_app(app)
    logs.init_app(app)
    i18n.init_app(app)

    app.register_blueprint(auth_bp)
    app.register_blueprint(api_bp)
    app.register_blueprint(pages_bp)
    app.register_blueprint(ops_bp)
    client_files.init_app(app)
    extensions.csrf.exempt(api_bp)
    rate_limits.init_app(app, api_bp, built.limiter)
    webhook_figures.init_app(built)

    fast_publish.install(app)  # behind every middleware below (app/web/api/fast_publish.py)
    security.check_hosts(app)  # Flask's requests here, Socket.IO's in its server (services.py)
    services.mount_socketio(app, built)
    security.trust_proxies(app)
    commands.init_app(app)
    return app
