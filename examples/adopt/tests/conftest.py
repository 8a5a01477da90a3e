"""Chirp's own test fixtures: the app in testing mode (Herald records what it would
publish, sends nothing, starts no thread), signed-in clients, and a real redis-server
for the RQ queue, on a unix socket of its own."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the app: chirp/

from redis import Redis  # noqa: E402
from rq.timeouts import TimerDeathPenalty  # noqa: E402

from chirp import create_app  # noqa: E402
from chirp.cli import PASSWORD, seed  # noqa: E402
from chirp.config import TestConfig  # noqa: E402
from chirp.extensions import db  # noqa: E402
from chirp.worker import AppWorker  # noqa: E402


@pytest.fixture(scope="session")
def redis_url():
    """A redis-server of the tests' own, on a unix socket in a temporary folder."""
    if shutil.which("redis-server") is None:
        pytest.fail("Chirp's tests need redis-server (apt-get install redis-server)")
    folder = tempfile.mkdtemp(prefix="chirp-redis-")
    sock = os.path.join(folder, "redis.sock")
    server = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", sock, "--save", "",
                               "--appendonly", "no", "--dir", folder],
                              stdout=subprocess.DEVNULL)
    client = Redis(unix_socket_path=sock)
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except Exception:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise
            time.sleep(0.02)
    client.close()
    yield f"unix://{sock}"
    server.terminate()
    server.wait(10)
    shutil.rmtree(folder, ignore_errors=True)


class Config(TestConfig):
    HERALD_JWT_SECRET = "chirp-tests-secret-of-32-bytes-or-more"


@pytest.fixture
def app(redis_url):
    app = create_app(type("Config", (Config,), {"REDIS_URL": redis_url}))
    with app.app_context():
        db.create_all()
        seed()
        app.redis.flushdb()
    yield app
    with app.app_context():
        db.drop_all()
        db.engine.dispose()


@pytest.fixture
def users(app):
    """The demo users alice, bob and carol, by handle: ``{"alice": (id, email), ...}``."""
    from chirp.models import User
    with app.app_context():
        return {user.email.split("@")[0]: (user.id, user.email)
                for user in db.session.scalars(db.select(User))}


@pytest.fixture
def sign_in(app, users):
    """``sign_in("bob")``: a test client signed in as that demo user."""
    def signed_in(handle):
        client = app.test_client()
        reply = client.post("/login", data={"email": users[handle][1], "password": PASSWORD})
        assert reply.status_code == 302, reply.get_data(as_text=True)
        return client
    return signed_in


@pytest.fixture
def run_jobs(app):
    """Run what is queued, as worker.py does (each job in an app context of its own),
    in this process, until the queue is empty."""
    class Worker(AppWorker):
        death_penalty_class = TimerDeathPenalty  # no SIGALRM: pytest-timeout has it

    def run():
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            Worker(app, [app.task_queue], connection=app.redis).work(burst=True,
                                                                       with_scheduler=False)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    return run
