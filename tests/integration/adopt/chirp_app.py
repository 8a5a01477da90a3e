"""Chirp (examples/adopt) as its developer runs it: ``flask db upgrade``, ``flask seed``,
``flask run`` and ``python -m chirp.worker``, each a process of its own, against a live
Herald. Every process started here is stopped by :meth:`Chirp.stop`."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import requests

from app.ops import processes
from tests.support import ROOT, free_port, wait_until

EXAMPLE = ROOT / "examples" / "adopt"
JWT_SECRET = "chirp-tests-jwt-secret-of-32-bytes-or-more"
PASSWORD = "chirp-demo"


def copy_example(folder):
    """A copy of the example, as a developer's checkout of it (its migrations included)."""
    target = Path(folder) / "chirp-app"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__", "*.db"))
    return target


def redis_database(url, number):
    """``redis://host:port/0`` with database ``number`` (Chirp's RQ jobs, apart from Herald)."""
    return re.sub(r"/\d*$", f"/{number}", url)


class Chirp:
    """Chirp in ``source`` (the example, or a copy), on ``database_url``, beside Herald."""

    def __init__(self, herald_url, api_key, redis_url, database_url, folder, source=EXAMPLE,
                 port=None, **env):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.source = Path(source)
        self.folder = Path(folder)
        self.env = dict(os.environ, PYTHONPATH=str(self.source), FLASK_APP="chirp",
                        PYTHONUNBUFFERED="1", DATABASE_URL=database_url,
                        REDIS_URL=redis_database(redis_url, 1), SECRET_KEY="chirp-test-key",
                        CHIRP_URL=self.url, HERALD_URL=herald_url, HERALD_API_KEY=api_key,
                        HERALD_JWT_SECRET=JWT_SECRET, EXPORT_PACE="0")
        self.env.update(env)
        self.web = self.worker = None
        self.logs = []

    def flask(self, *args):
        """``flask ARGS`` in the app's folder, as its developer types it; its output."""
        done = subprocess.run([sys.executable, "-m", "flask", *args], cwd=self.source,
                              env=self.env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"flask {' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done.stdout + done.stderr

    def _spawn(self, name, argv):
        log_path = self.folder / f"chirp-{name}-{self.port}.log"
        log = open(log_path, "ab")
        self.logs.append((log_path, log))
        return subprocess.Popen(argv, cwd=self.source, env=self.env, stdout=log,
                                stderr=subprocess.STDOUT), log_path

    def start(self):
        """``flask run`` (the web app), once it answers."""
        self.web, log_path = self._spawn("web", [
            sys.executable, "-m", "flask", "run", "--host", "127.0.0.1", "--port", str(self.port),
            "--no-reload", "--no-debugger"])
        wait_until(lambda: self._up(log_path), timeout=15, message=f"Chirp ({log_path})")
        return self

    def _up(self, log_path):
        if self.web.poll() is not None:
            raise AssertionError(f"Chirp exited: {log_path.read_text()}")
        try:
            return requests.get(self.url + "/login", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def start_worker(self):
        """``python -m chirp.worker``: the RQ worker, once it listens."""
        self.worker, log_path = self._spawn("worker", [sys.executable, "-m", "chirp.worker"])
        wait_until(lambda: "Listening on chirp" in log_path.read_text(), timeout=15,
                   message=f"Chirp's worker ({log_path})")
        return self

    def stop(self):
        for process in (self.worker, self.web):
            if process is not None:
                processes.stop(process)
        for _path, log in self.logs:
            log.close()
        self.logs = []

    def sign_in(self, handle):
        """A requests session signed in as a demo user through the real login form."""
        session = requests.Session()
        session.post(self.url + "/login", timeout=5, data={
            "email": f"{handle}@chirp.test", "password": PASSWORD,
            "csrf_token": csrf_token(session.get(self.url + "/login", timeout=5).text)})
        assert "Sign out" in session.get(self.url + "/", timeout=5).text
        return session


def send_message(session, url, to, body):
    """Send a message as ``session``'s user to the user named ``to``, through the form."""
    page = session.get(url + "/messages", timeout=5).text
    recipient = re.search(rf'<option value="(\d+)"[^>]*>{re.escape(to)}</option>', page).group(1)
    reply = session.post(url + "/messages", timeout=5, data={
        "to": recipient, "body": body, "csrf_token": csrf_token(page)})
    assert reply.ok and f"Sent to {to}." in reply.text, reply.text


def csrf_token(page):
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
