"""Chirp: a small Flask app (users who follow each other, posts, private messages, an
export job) that adopts Herald as docs/adopt.md says.

    flask --app chirp db upgrade && flask --app chirp seed && flask --app chirp run
    python worker.py                    # the RQ worker that runs exports

Every line that is there only for Herald is marked ``# Herald``.
"""
from flask import Flask
from redis import Redis
from rq import Queue

from . import cli, models, security, times  # noqa: F401  (models: the tables Herald tracks)
from .auth import bp as auth_bp
from .config import Config
from .extensions import csrf, db, herald, login, migrate
from .main import bp as main_bp


def create_app(config_class=Config):
    app = Flask(__name__)
    app.config.from_object(config_class)
    db.init_app(app)
    migrate.init_app(app, db)
    login.init_app(app)
    csrf.init_app(app)
    herald.init_app(app)  # Herald: after db, so that its outbox table joins db.metadata
    app.redis = Redis.from_url(app.config["REDIS_URL"])
    app.task_queue = Queue("chirp", connection=app.redis)
    app.register_blueprint(auth_bp)
    app.register_blueprint(main_bp)
    times.init_app(app)
    security.init_app(app)
    cli.init_app(app)
    return app
