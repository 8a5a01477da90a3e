"""The relay starts itself where it should (issue 34, item 4), under real servers: in
gunicorn's sync, gthread and gevent workers (with and without ``--preload``), once a
process, shipping what a dead process left before any request and each commit's
rows once; and not in a ``flask`` command that only makes the app.

The host app is tests/integration/adopt/host.py's, on a SQLite file or PostgreSQL.
Each relay logs ``outbox relay: started in process <pid>`` (INFO); gunicorn is given
a logging config that keeps it, and the tests count those lines per process."""
import collections
import contextlib
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from sqlalchemy import MetaData, create_engine

from app.ops import processes
from herald_client import outbox_rows
from tests.integration.outbox.support import stream
from tests.support import ROOT, free_port, wait_until

HOST = "tests.integration.adopt.host:create_app"
THREE = ["posts.created", "timeline.refresh", "messages.new"]  # one commit of POST /posts
STARTED = re.compile(r"outbox relay: started in process (\d+)")
BOOTED = re.compile(r"Booting worker with pid: (\d+)")
# gunicorn's own log and the app's (root, INFO: the relay's line) on stdout, each line
# with its process id; the access log ("[pid] ... POST /posts") tells who served what.
LOGGING = {
    "root": {"level": "INFO", "handlers": ["console"]},
    "loggers": {name: {"level": "INFO", "handlers": ["console"], "propagate": False}
                for name in ("gunicorn.error", "gunicorn.access")},
}
ACCESS = re.compile(r"\[(\d+)\] \[INFO\] .*\"POST /posts HTTP/1\.1\" 201")


def host_env(database_url, herald, api_key):
    """The host app's settings (host.py reads them), the relay on; a PYTHONPATH given
    comes first (another herald_client to try)."""
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))
    return dict(os.environ, HOST_DATABASE_URL=database_url, HERALD_URL=herald.url,
                HERALD_API_KEY=api_key, HERALD_OUTBOX_RELAY="1", PYTHONPATH=path,
                PYTHONUNBUFFERED="1")


def die_after_committing(env, body="orphan"):
    """A process with no relay commits a post (three rows) and dies before anything ships."""
    committing = (f"from {HOST.split(':')[0]} import create_app; import os; "
                  f"c = create_app().test_client(); "
                  f"assert c.post('/posts', json={{'body': {body!r}}}).status_code == 201; "
                  "os._exit(0)")
    subprocess.run([sys.executable, "-c", committing], env=dict(env, HERALD_OUTBOX_RELAY="0"),
                   cwd=ROOT, check=True, timeout=60)


def counts(database_url):
    """The outbox's rows: ``{"pending", "sent", "refused"}``."""
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            return outbox_rows.counts(connection, outbox_rows.make_table(metadata=MetaData()))
    finally:
        engine.dispose()


def topics(redis):
    return [envelope["topic"] for envelope in stream(redis)]


class Gunicorn:
    """``python -m gunicorn`` serving the host app on a free port, logging to a file."""

    def __init__(self, folder, env, worker, preload, workers=2):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = folder / f"gunicorn-{self.port}.log"
        config = folder / "logging.json"
        config.write_text(json.dumps(LOGGING))
        self.args = [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{self.port}",
                     "--workers", str(workers), "--worker-class", worker,
                     "--graceful-timeout", "5", "--no-control-socket", "--log-level", "info",
                     "--log-config-json", str(config)]
        if worker == "gthread":
            self.args += ["--threads", "4"]
        if preload:
            self.args.append("--preload")
        self.args.append(f"{HOST}()")
        self.env = env
        self.process = None

    def start(self):
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(self.args, cwd=ROOT, env=self.env, stdout=self.log,
                                        stderr=subprocess.STDOUT)

    def output(self):
        return self.log_path.read_text()

    def booted(self):
        """The pids of the workers booted so far (fails when gunicorn exited)."""
        if self.process.poll() is not None:
            raise AssertionError(f"gunicorn exited: {self.output()}")
        return [int(pid) for pid in BOOTED.findall(self.output())]

    def relays(self):
        """How many relays each process started: ``{pid: count}``."""
        return collections.Counter(int(pid) for pid in STARTED.findall(self.output()))

    def served(self):
        """The pids of the workers that answered a POST /posts."""
        return {int(pid) for pid in ACCESS.findall(self.output())}

    def stop(self):
        processes.stop(self.process, 20)
        self.log.close()


@contextlib.contextmanager
def gunicorn(folder, env, worker, preload):
    server = Gunicorn(folder, env, worker, preload)
    server.start()
    try:
        yield server
    finally:
        server.stop()


SERVERS = [  # (worker class, --preload, database): PostgreSQL for sync and gevent
    ("sync", False, "sqlite_url"), ("sync", True, "sqlite_url"),
    ("sync", False, "postgres_url"), ("sync", True, "postgres_url"),
    ("gthread", False, "sqlite_url"), ("gthread", True, "sqlite_url"),
    ("gevent", False, "sqlite_url"), ("gevent", True, "sqlite_url"),
    ("gevent", False, "postgres_url"), ("gevent", True, "postgres_url"),
]


@pytest.mark.parametrize("worker,preload,database", SERVERS, ids=[
    f"{worker}-{'preload' if preload else 'fork'}-{database.split('_')[0]}"
    for worker, preload, database in SERVERS])
def test_gunicorn_ships_a_dead_process_rows_at_start_and_each_commit_once_one_relay_a_process(
        request, worker, preload, database, live_server, redis, api_key, tmp_path):
    """(a) Rows a crashed process left are shipped once gunicorn is up, before any
    request: by each worker's relay (the app is made in the worker), or with
    ``--preload`` by the master's (the app is made there). (b) Each POST /posts
    through gunicorn publishes its three events, once. (c) One relay per process:
    each worker without ``--preload``; with it the master and, after the fork (which
    the thread does not survive), each worker that served a request."""
    database_url = request.getfixturevalue(database)
    env = host_env(database_url, live_server, api_key)
    die_after_committing(env)
    assert stream(redis) == [] and counts(database_url)["pending"] == 3

    with gunicorn(tmp_path, env, worker, preload) as server:
        wait_until(lambda: len(server.booted()) == 2, timeout=30, message="two workers")
        if not preload:  # each worker makes the app: its relay starts then
            wait_until(lambda: set(server.relays()) == set(server.booted()), timeout=30,
                       message=f"each worker's relay ({server.log_path})")
        wait_until(lambda: len(stream(redis)) >= 3, timeout=20,
                   message=f"the dead process's rows, before any request ({server.log_path})")
        assert topics(redis) == THREE
        if preload:  # the master's relay shipped them; the workers' threads were not forked
            assert set(server.relays()) == {server.process.pid}, server.output()

        posts = [f"post {n}" for n in range(12)]
        with ThreadPoolExecutor(4) as senders:  # first requests at once: still one relay
            replies = list(senders.map(lambda body: requests.post(
                server.url + "/posts", json={"body": body}, timeout=10), posts))
        assert [reply.status_code for reply in replies] == [201] * len(posts), \
            [reply.text for reply in replies]
        wait_until(lambda: len(stream(redis)) >= 3 * (1 + len(posts)), timeout=20,
                   message="every commit's three events")
        wait_until(lambda: counts(database_url)["pending"] == 0, timeout=20,
                   message="no row pending")
        wait_until(lambda: len(ACCESS.findall(server.output())) == len(posts), timeout=10,
                   message="the access log's lines")
        relays, served, workers = server.relays(), server.served(), set(server.booted())
        master = server.process.pid
        output = server.output()

    envelopes = stream(redis)
    assert len(envelopes) == 3 * (1 + len(posts)), "a commit's events published twice"
    assert [e["topic"] for e in envelopes] == THREE * (1 + len(posts))  # in commit order
    alerts = [e["title"] for e in envelopes if e["topic"] == "messages.new"]
    assert alerts[0] == "New post: orphan"
    assert sorted(alerts[1:]) == sorted(f"New post: {body}" for body in posts)
    assert counts(database_url) == {"pending": 0, "sent": 3 * (1 + len(posts)), "refused": 0}

    assert "Herald refused" not in output and "Exception on" not in output, output
    assert relays and max(relays.values()) == 1, f"a process started two relays:\n{output}"
    assert len(workers) == 2 and served and served <= workers  # no worker died and came back
    if preload:
        assert master in relays, f"the master made the app and started no relay:\n{output}"
        assert served <= set(relays), f"a worker served without a relay:\n{output}"
        assert set(relays) <= workers | {master}
    else:
        assert master not in relays, f"the master never makes the app:\n{output}"
        assert set(relays) == workers, f"each worker makes the app, and a relay:\n{output}"


def test_a_flask_command_that_makes_the_app_starts_no_relay_and_herald_relay_once_ships(
        sqlite_url, live_server, redis, api_key):
    """``flask routes`` makes the app (in the ``flask`` command's click context): no relay,
    the dead process's rows stay pending; ``flask herald relay --once`` ships them."""
    env = host_env(sqlite_url, live_server, api_key)
    die_after_committing(env)
    # The flask command as the ``flask`` script runs it, with INFO logging on (the relay's
    # line would show).
    logging = "import logging, sys; logging.basicConfig(level=logging.INFO); "
    flask = logging + "from flask.cli import main; sys.argv[0] = 'flask'; main()"

    def run(*args, code=flask):
        return subprocess.run([sys.executable, "-c", code, "--app", f"{HOST}()", *args], env=env,
                              cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)

    routes = run("routes")
    assert "herald_token" in routes.stdout and "add_post" in routes.stdout
    assert not STARTED.search(routes.stdout + routes.stderr), routes.stderr
    assert stream(redis) == [] and counts(sqlite_url) == {"pending": 3, "sent": 0, "refused": 0}

    once = run("herald", "relay", "--once")
    assert "shipped 3 outbox rows" in once.stdout
    assert not STARTED.search(once.stdout + once.stderr), once.stderr
    assert topics(redis) == THREE
    assert counts(sqlite_url) == {"pending": 0, "sent": 3, "refused": 0}

    # The same logging shows a relay's start where the app is made outside a command.
    made = run(code=logging + f"from {HOST.split(':')[0]} import create_app; create_app()")
    assert STARTED.search(made.stderr), made.stderr
