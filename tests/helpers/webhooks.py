"""Real HTTP receivers on loopback and the real webhook worker process, for the webhook
tests of tests/unit and tests/integration (their conftest.py files import the fixtures).

- ``Receiver``: a stdlib ``ThreadingHTTPServer`` in a thread that records
  every POST (headers, body, arrival time) and answers as the test says:
  a status, a delay, or a hang until released; it can be stopped and started
  again on the same port (a receiver that is down).
- ``WebhookWorker``: ``python -m workers.webhooks`` on the test's Redis with
  ``WEBHOOK_ALLOW=127.0.0.0/8`` and a short backoff (``WEBHOOK_BACKOFF_BASE``
  0.05 s, ``WEBHOOK_BACKOFF_MAX`` 0.5 s), so that minutes of retrying take
  seconds. Stopped by the fixture or test that started it.
"""
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from app.ops import processes
from tests.support import ROOT, free_port, issue_token, wait_until

LOOPBACK_ALLOWED = "127.0.0.0/8"


class _Server(ThreadingHTTPServer):
    """Its connections are daemon threads; :meth:`close_connections` ends those still
    open (a worker's kept-alive connection), which ``server_close`` leaves alone."""

    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, *args, **kwargs):
        self.connections = set()
        self.connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address):
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self):
        with self.connections_lock:
            open_now, self.connections = self.connections, set()
        for request in open_now:
            try:
                request.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # closed by its peer already
            request.close()

    def handle_error(self, request, client_address):
        pass  # a worker killed mid-request leaves a broken pipe: expected here


class Receiver:
    """A webhook receiver on a loopback port; ``requests`` are what it got, in arrival order."""

    def __init__(self, status=200, delay=0.0, hang_on=None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook?x=1"
        self.status, self.delay = status, delay
        self.requests = []
        self.lock = threading.Lock()
        self.released = threading.Event()
        self.hang = False       # every request hangs until ``released``
        self.hang_on = hang_on  # the request of this number (1 for the first) hangs so
        self.server = None

    def start(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.lock:
                    receiver.requests.append({"headers": dict(self.headers), "body": body,
                                              "path": self.path, "at": time.time()})
                    number = len(receiver.requests)
                if receiver.hang or number == receiver.hang_on:
                    receiver.released.wait(30)
                if receiver.delay:
                    time.sleep(receiver.delay)
                self.send_response(receiver.status)
                if 300 <= receiver.status < 400:
                    self.send_header("Location", receiver.url)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = _Server(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def stop(self):
        if self.server is not None:
            self.released.set()
            self.server.shutdown()
            self.server.server_close()
            self.server.close_connections()
            self.server = None

    def deliveries(self):
        """``(Herald-Delivery, envelope)`` of every request, in arrival order."""
        with self.lock:
            return [(r["headers"]["Herald-Delivery"], json.loads(r["body"])) for r in self.requests]

    def unique(self):
        """The envelopes once each (duplicates dropped by Herald-Delivery), in first-arrival order."""
        seen, kept = set(), []
        for delivery, envelope in self.deliveries():
            if delivery not in seen:
                seen.add(delivery)
                kept.append(envelope)
        return kept

    def titles(self):
        return [e["title"] for e in self.unique()]


@pytest.fixture
def receivers():
    """Makes started receivers; stops every one at the end."""
    made = []

    def make(**options):
        receiver = Receiver(**options).start()
        made.append(receiver)
        return receiver
    yield make
    for receiver in made:
        receiver.stop()


class WebhookWorker:
    def __init__(self, redis_url, folder, **env):
        self.log_path = Path(folder) / f"webhooks-{free_port()}.log"
        self.env = {**os.environ, "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1",
                    "WEBHOOK_ALLOW": LOOPBACK_ALLOWED, "WEBHOOK_BACKOFF_BASE": "0.05",
                    "WEBHOOK_BACKOFF_MAX": "0.5", "LOG_FORMAT": "text", **env}
        self.process = None

    def start(self):
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "workers.webhooks"], cwd=ROOT,
                                        env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(self._started, timeout=15, message=f"webhook worker ({self.log_path})")
        return self

    def _started(self):
        if self.process.poll() is not None:
            raise AssertionError(f"webhook worker exited: {self.log_path.read_text()}")
        return "delivering webhooks" in self.log_path.read_text()

    def kill(self):
        self.process.kill()
        self.process.wait(10)
        self.log.close()

    def stop(self):
        processes.stop(self.process, 20)
        if not self.log.closed:
            self.log.close()

    def output(self):
        return self.log_path.read_text()


@pytest.fixture
def start_worker(redis_server, tmp_path):
    """Starts webhook workers (``start_worker(**env)``); stops every one at the end."""
    started = []

    def start(**env):
        worker = WebhookWorker(redis_server.url, tmp_path, **env).start()
        started.append(worker)
        return worker
    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def allow_loopback(monkeypatch):
    """Registration (in this process) may point at loopback receivers."""
    monkeypatch.setenv("WEBHOOK_ALLOW", LOOPBACK_ALLOWED)


@pytest.fixture
def admin_token(admin):
    return issue_token(admin[0])


def register(client, token, url, **fields):
    """POST /api/webhooks; returns the answer's JSON (asserting 201)."""
    reply = client.post("/api/webhooks", json={"url": url, "topics": ["*"], **fields},
                        headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 201, reply.get_json()
    return reply.get_json()
