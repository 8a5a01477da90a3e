"""Herald: real-time notifications for Flask, relayed over Socket.IO.

``create_app(config)`` builds the web app: Redis client and Bus, blueprints
(auth, api, pages), CLI commands, and the Socket.IO server mounted in front
of the Flask app. The relay (one Redis subscription per process) is started
by whoever serves the app, see ``wsgi.serve``.

Importing the package costs nothing: workers, the ZeroMQ bridge and Spark
jobs use ``app.stream.publish`` and ``app.stream.envelope`` without loading Flask.
"""


def create_app(config=None):
    """Build a Herald app from ``config`` (a Config; from the environment by default)."""

    from flask import Flask

    from app.cli import commands as cli
    from app.web import client_files, extensions
    from app.ops import logs
    from app.web import rate_limits, security
    from app.web.api import bp as api_bp
    from app.web.auth import bp as auth_bp
    from app.web.auth.bearer import TokenVerifier
    from app.web.auth.host_tokens import ConfigError, HostTokens
    from app.stream.publish import Bus
    from app.settings import ROOT, Config
    from app.ops.probes import bp as ops_bp
    from app.web.pages import bp as pages_bp
    from app.realtime import init_app as init_realtime
    from app.redis_client import connect

    config = config or Config()
    app = Flask(__name__, static_folder=str(ROOT / "static"),
                template_folder=str(ROOT / "templates"))
    app.config.from_object(config)
    logs.configure()

    client = connect(app.config["REDIS_URL"])
    app.extensions["herald.redis"] = client
    app.extensions["herald.bus"] = Bus(client, app.config["HISTORY_MAX"])
    try:
        host = HostTokens(app.config["JWT_SECRET"], app.config["JWT_PUBLIC_KEY"],
                          app.config["JWT_AUDIENCE"], app.config["JWT_ISSUER"],
                          app.config["JWT_LEEWAY"])
    except ConfigError as exc:
        raise SystemExit(f"herald: {exc}") from None
    app.extensions["herald.tokens"] = TokenVerifier(client, app.config["SECRET_KEY"],
                                                    app.config["TOKEN_TTL"], host)
    extensions.csrf.init_app(app)
    security.init_app(app)
    logs.init_app(app)

    app.register_blueprint(auth_bp)
    app.register_blueprint(api_bp)
    app.register_blueprint(pages_bp)
    app.register_blueprint(ops_bp)
    client_files.init_app(app)
    extensions.csrf.exempt(api_bp)
    rate_limits.init_app(app, api_bp)

    init_realtime(app)
    security.trust_proxies(app)
    cli.init_app(app)
    return app
