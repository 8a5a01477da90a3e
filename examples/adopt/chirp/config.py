"""Chirp's settings: every one read from the environment here, and nowhere else.

The HERALD_* keys are the Herald extension's (herald_client/flask.py's DEFAULTS
lists them all); the rest are Chirp's own.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


class Config:
    SECRET_KEY = os.environ.get("SECRET_KEY") or "chirp-dev-only-secret"
    SQLALCHEMY_DATABASE_URI = os.environ.get("DATABASE_URL") or \
        "sqlite:///" + os.path.join(os.path.dirname(HERE), "chirp.db")
    REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/1"  # the RQ jobs
    EXPORT_PACE = float(os.environ.get("EXPORT_PACE", "0.2"))  # seconds per step of an export
    SESSION_COOKIE_SAMESITE = "Lax"
    # Herald: where it is, the key that publishes, the secret that signs our users' tokens.
    HERALD_URL = os.environ.get("HERALD_URL")
    HERALD_API_KEY = os.environ.get("HERALD_API_KEY")
    HERALD_JWT_SECRET = os.environ.get("HERALD_JWT_SECRET")
    HERALD_JWT_AUDIENCE = os.environ.get("HERALD_JWT_AUDIENCE")  # when Herald has JWT_AUDIENCE
    HERALD_JWT_ISSUER = os.environ.get("HERALD_JWT_ISSUER")      # when Herald has JWT_ISSUER
    HERALD_APP_URL = os.environ.get("CHIRP_URL")  # what url="/messages" means in the worker
    HERALD_TOPICS = ["posts", "timeline"]  # the only topics a page may subscribe to


class TestConfig(Config):
    TESTING = True  # Herald too: nothing sent, no thread, HERALD_URL not needed
    SQLALCHEMY_DATABASE_URI = "sqlite://"
    WTF_CSRF_ENABLED = False
    EXPORT_PACE = 0.0
    HERALD_APP_URL = "http://chirp.test"
