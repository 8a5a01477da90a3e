"""Helpers for tests: real servers on free loopback ports, and small clients.

Every process started here is stopped by the fixture or test that started
it; every wait is bounded in time.
"""
import contextlib
import email
import email.policy
import itertools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import engineio
import requests
import socketio
import websocket
from aiosmtpd.controller import Controller

from app.ops import processes
from app.redis_client import connect

ROOT = Path(__file__).resolve().parent.parent
# The Herald whose processes are started: this tree, or another checkout (bin/bench_compare.py
# runs this tree's benchmarks against an older commit's server and workers).
SERVER_ROOT = Path(os.environ.get("HERALD_SERVER_ROOT") or ROOT)
NAMESPACE = "/notifications"


# Ports for servers the tests start come from 10000-19999, below the kernel's
# ephemeral range (32768-60999 here), split between xdist workers: a port the
# kernel picked for bind(0) could be picked again for the next call, or handed to
# an outgoing connection, before the server meant for it binds it (CI once got
# the same port for two of the bridge's three endpoints). A Redis Cluster node's
# bus port (10,000 above it) then falls in 20000-29999, which nothing else takes.
# Only the test process itself takes from its slice: a process it starts (a bench
# script run by a test) would walk the same slice from another place, onto ports
# the test process handed out before; it takes the kernel's choice instead, never
# the same one twice.
PORTS_FIRST, PORTS_END = 10000, 20000
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_OWNER = f"HERALD_TEST_PORTS_{_WORKER or 'MAIN'}"  # the pid whose slice it is
os.environ.setdefault(_OWNER, str(os.getpid()))


def _port_slice():
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    index = int(_WORKER[2:]) if _WORKER.startswith("gw") and _WORKER[2:].isdigit() else 0
    width = (PORTS_END - PORTS_FIRST) // max(count, 1)
    first = PORTS_FIRST + (index % max(count, 1)) * width
    return range(first, first + width)


_PORTS = _port_slice() if os.environ[_OWNER] == str(os.getpid()) else None
_next_port = itertools.count(int.from_bytes(os.urandom(2), "big") % 10000)
_handed_out = set()  # by the kernel's choice, in a process that has no slice


def free_port():
    """A loopback port no server holds, never the same twice from this process
    (see PORTS_FIRST)."""
    if _PORTS is None:
        for _ in range(100):
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            if port not in _handed_out:
                _handed_out.add(port)
                return port
        raise AssertionError("the kernel gave only ports handed out before")
    for _ in range(len(_PORTS)):
        port = _PORTS[next(_next_port) % len(_PORTS)]
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise AssertionError(f"no free loopback port in {_PORTS.start}-{_PORTS.stop - 1}")


def wait_until(predicate, timeout=5.0, interval=0.02, message="condition"):
    """Poll ``predicate`` until it is truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {message}")


def wait_for(read, holds, timeout=10.0, message="condition"):
    """Poll ``read()`` until ``holds(value)``; return that value.

    For state another party writes after what a test saw (a worker counts a
    delivery once the receiver's answer is back): wait on the state itself."""
    last = []

    def check():
        last[:] = [read()]
        return holds(last[0])
    try:
        wait_until(check, timeout=timeout, message=message)
    except AssertionError as error:
        raise AssertionError(f"{error}; last read: {last[0] if last else None!r}") from None
    return last[0]


class Supervised:
    """A script of this checkout (``bin/stack.py``, ``bin/example.py``) in its own
    process with ``env``, its output collected line by line; stopped with Ctrl-C, as a
    user stops it (a supervisor stops its own children then)."""

    def __init__(self, script, env):
        self.lines = []
        self.process = subprocess.Popen([sys.executable, script], cwd=ROOT, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line)

    def output(self):
        return "".join(self.lines)

    def said(self, pattern, timeout=60):
        """The first match of ``pattern`` in the output, once it is there."""
        try:
            return wait_until(lambda: re.search(pattern, self.output()), timeout=timeout,
                              message=repr(pattern))
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the output:\n{self.output()}") from None

    def stop(self):
        """Make sure it is gone (a no-op after a clean exit): Ctrl-C first, so that it
        stops its children (in sessions of their own, they would outlive a SIGKILL of
        it), SIGKILL last. Its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.reader.join(5)
        self.process.stdout.close()
        return self.process.returncode


class RedisServer:
    """A real redis-server on a free loopback port, append-only file on.

    ``durable=False`` keeps the data in memory only: for tests that never stop or
    kill it (tests/unit), where an fsync per write would be most of their time.
    """

    def __init__(self, folder, port=None, durable=True):
        self.folder = Path(folder)
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.durable = durable
        self.process = None

    def start(self, wait=True):
        """Start it; with ``wait``, return once it answers (its data loaded)."""
        persistence = (["--appendonly", "yes", "--appendfsync", "always"] if self.durable
                       else ["--appendonly", "no"])
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.folder), *persistence,
             "--save", "", "--logfile", str(self.folder / "redis.log")])
        if wait:
            client = self.client()
            wait_until(lambda: _pings(client), timeout=10, message="redis-server to answer")
            client.close()

    def client(self):
        return connect(self.url)

    def kill(self):
        """Stop abruptly (SIGKILL), as a crash would; start() brings it back with its data."""
        crash(self.process)

    def stop(self):
        processes.stop(self.process)


def crash(process):
    """SIGKILL ``process`` (if it still runs) and reap it, as a crash would end it."""
    if process and process.poll() is None:
        process.kill()
        process.wait(10)


def _pings(client):
    try:
        return client.ping()
    except Exception:
        return False


_LOG_NUMBERS = itertools.count(1)


class LiveServer:
    """``python wsgi.py`` on a free port (or ``port``), as production runs it."""

    def __init__(self, redis_url, folder, port=None, **env):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(folder) / f"web-{self.port}-{next(_LOG_NUMBERS)}.log"
        # Tests sign many clients in from one address: limits high unless a test sets them.
        limits = {"RATELIMIT_LOGIN": "1000 per minute", "RATELIMIT_TOKEN": "1000 per minute",
                  "RATELIMIT_SESSION_TOKEN": "1000 per minute"}
        self.env = dict(os.environ, REDIS_URL=redis_url, PORT=str(self.port),
                        HOST="127.0.0.1", SECRET_KEY="test-secret-key",
                        VAR_DIR=str(folder), PYTHONUNBUFFERED="1", **{**limits, **env})
        self.process = None

    command = ("wsgi.py",)  # what runs, relative to SERVER_ROOT

    def start(self):
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen([sys.executable, *self.command], cwd=SERVER_ROOT,
                                        env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(self._ready, timeout=15, interval=0.05, message=f"web server ({self.log_path})")

    def _ready(self):
        if self.process.poll() is not None:
            raise AssertionError(f"web server exited: {self.log_path.read_text()}")
        # Started means relaying: Redis answers and this process's relay follows
        # herald:live (/readyz not "unavailable"). Faults and missing heartbeats
        # ("degraded") are the tests' business. /healthz alone answers before
        # the relay follows, and a test that asked /readyz at once raced it.
        try:
            reply = requests.get(self.url + "/readyz", timeout=1)
        except requests.RequestException:
            return False
        # Processes sharing a port (REUSE_PORT=1) answer in turn: wait for this one's answer.
        body = reply.json() if reply.headers.get("Content-Type", "").startswith("application/json") else {}
        return body.get("process") == self.process.pid and body.get("status") in ("ok", "degraded")

    def kill(self):
        """Stop abruptly, as a crash would; start() runs it again on the same port."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        if getattr(self, "log", None):
            self.log.close()

    def stop(self):
        processes.stop(self.process)
        if getattr(self, "log", None):
            self.log.close()

    def token(self, name, password):
        reply = requests.post(self.url + "/auth/token",
                              json={"username": name, "password": password}, timeout=5)
        reply.raise_for_status()
        return reply.json()["token"]

    def publish(self, api_key, **envelope):
        reply = requests.post(self.url + "/api/notifications", json=envelope,
                              headers={"Authorization": f"Bearer {api_key}"}, timeout=5)
        assert reply.status_code == 201, reply.text
        return reply.json()["id"]


class CensusServer(LiveServer):
    """wsgi.py with a census port: ``script`` (run with the port as its argument)
    answers a connection with one JSON line about the web process's memory
    (tests/helpers/census_server.py, bench/churn_census.py)."""

    def __init__(self, redis_url, folder, script="tests/helpers/census_server.py", **env):
        super().__init__(redis_url, folder, **env)
        self.census_port = free_port()
        self.command = (script, str(self.census_port))

    def census(self, request=b"", timeout=10):
        """The census script's answer, after sending it ``request`` (a line, or nothing)."""
        with socket.create_connection(("127.0.0.1", self.census_port), timeout=timeout) as sock:
            if request:
                sock.sendall(request)
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(1 << 16)
                if not chunk:
                    raise AssertionError("the census port closed without an answer")
                data += chunk
        return json.loads(data)


EXAMPLE_JWT_SECRET = "the-example-board-secret-of-32-bytes-or-more"


@contextlib.contextmanager
def own_stack(folder, **env):
    """A redis-server of the caller's own (to pause, kill or restart) and a web server on
    it: yields ``(redis_server, client, server)``; all three are stopped after."""
    redis_server = RedisServer(folder)
    redis_server.start()
    client = redis_server.client()
    server = LiveServer(redis_server.url, folder, **env)
    try:
        server.start()
        yield redis_server, client, server
    finally:
        server.stop()
        client.close()
        redis_server.stop()


class ExampleApp:
    """``python -m examples.board`` on a free port, pointed at a live Herald.

    Its database is the SQLite file ``db_path`` (cards, users and Herald's
    ``herald_outbox``); ``env`` adds to its environment (``BOARD_DATABASE_URL``
    for another database, ``HERALD_OUTBOX_RELAY=0``...)."""

    def __init__(self, herald_url, api_key, folder, port=None, **env):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(folder) / f"example-{self.port}.log"
        self.db_path = Path(folder) / "board.db"
        self.env = dict(os.environ, HERALD_URL=herald_url, HERALD_API_KEY=api_key,
                        HERALD_JWT_SECRET=EXAMPLE_JWT_SECRET, EXAMPLE_PORT=str(self.port),
                        BOARD_DB=str(self.db_path), EXAMPLE_SECRET_KEY="board-key",
                        PYTHONUNBUFFERED="1", **env)
        self.process = None

    def start(self):
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "examples.board"], cwd=SERVER_ROOT,
                                        env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(self._up, timeout=15, message=f"example app ({self.log_path})")

    def _up(self):
        if self.process.poll() is not None:
            raise AssertionError(f"example app exited: {self.log_path.read_text()}")
        try:
            return requests.get(self.url + "/login", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def stop(self):
        processes.stop(self.process)
        self.log.close()


class SteadyPublisher(threading.Thread):
    """Publishes one notification every ``interval`` seconds until stopped.

    ``accepted`` holds the ids of those accepted (in publish order, which is
    id order); ``refused`` counts attempts that failed (Redis or the web
    server away). ``publish`` is a function of (title) -> id that raises
    when the notification was not accepted.

    A refused notification is tried again, with the same title, until it is
    accepted (also past ``stop``, for at most ``settle`` seconds): a careful
    publisher does that, since a refusal can hide a write whose answer was
    lost. With an idempotent ``publish`` (see :func:`rest_publisher`) each
    title is then stored exactly once.
    """

    def __init__(self, publish, interval=0.01, limit=20_000, settle=15):
        super().__init__(daemon=True)
        self.publish = publish
        self.interval = interval
        self.limit = limit
        self.settle = settle
        self.accepted = []
        self.refused = 0
        self.stopping = threading.Event()

    def run(self):
        for count in range(self.limit):
            if self.stopping.is_set():
                return
            self._until_accepted(f"steady {count}")
            time.sleep(self.interval)

    def _until_accepted(self, title):
        deadline = None
        while True:
            try:
                self.accepted.append(self.publish(title))
                return
            except Exception:
                self.refused += 1
            if self.stopping.is_set():
                deadline = deadline or time.monotonic() + self.settle
                if time.monotonic() > deadline:
                    return
            time.sleep(self.interval)

    def stop(self):
        self.stopping.set()
        self.join(self.settle + 30)


def rest_publisher(server, api_key, topic):
    """A publish function for SteadyPublisher that goes through the REST API,
    idempotently: each title is its own Idempotency-Key, so trying a title
    again after an unanswered attempt cannot store it twice."""
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {api_key}"

    def publish(title):
        reply = session.post(server.url + "/api/notifications", timeout=5,
                             headers={"Idempotency-Key": title.replace(" ", "-")},
                             json={"topic": topic, "title": title})
        if reply.status_code != 201:
            raise RuntimeError(f"HTTP {reply.status_code}")
        return reply.json()["id"]
    return publish


class Bridge:
    """``python -m workers.zmq_bridge`` on free loopback ports."""

    def __init__(self, redis_url, folder, **env):
        self.pull, self.router, self.xpub = (f"tcp://127.0.0.1:{free_port()}" for _ in range(3))
        self.log_path = Path(folder) / f"bridge-{self.pull.rsplit(':', 1)[1]}.log"
        self.env = dict(os.environ, REDIS_URL=redis_url, BRIDGE_PULL=self.pull,
                        BRIDGE_ROUTER=self.router, BRIDGE_XPUB=self.xpub,
                        PYTHONUNBUFFERED="1", **env)
        self.process = None

    def start(self):
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "workers.zmq_bridge"], cwd=SERVER_ROOT,
                                        env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(self._listening, timeout=15, message=f"bridge ({self.log_path})")

    def _listening(self):
        if self.process.poll() is not None:
            raise AssertionError(f"bridge exited: {self.log_path.read_text()}")
        return "listening:" in self.log_path.read_text()

    def output(self):
        return self.log_path.read_text()

    def counters(self):
        """The counters the bridge logged when it stopped (call after stop())."""
        import ast
        messages = [json.loads(line)["message"] for line in self.output().splitlines()
                    if line.startswith("{") and '"logger":"herald.bridge"' in line]
        stopped = [m for m in messages if m.startswith("stopped; ")]
        assert stopped, ("the bridge logged no 'stopped' line: it did not stop within "
                         f"{self.STOP_SECONDS} s of SIGTERM and was killed\n" + self.output()[-2000:])
        return ast.literal_eval(stopped[-1].split("stopped; ", 1)[1])

    STOP_SECONDS = 30  # a clean stop (egress child included) on a machine busy with other tests

    def stop(self):
        processes.stop(self.process, self.STOP_SECONDS)
        if getattr(self, "log", None):
            self.log.close()


def refusal(server, auth):
    """The reason the server gives for refusing a Socket.IO connect with ``auth``
    (fails the test when it is accepted)."""
    reasons = []
    client = socketio.Client(reconnection=False)
    client.on("connect_error", lambda data: reasons.append(data), namespace=NAMESPACE)
    try:
        client.connect(server.url, namespaces=[NAMESPACE], auth=auth, transports=["websocket"],
                       wait_timeout=5)
    except socketio.exceptions.ConnectionError:
        pass
    finally:
        client.disconnect()
    assert reasons, "the connection was accepted"
    return reasons[0]["message"] if isinstance(reasons[0], dict) else str(reasons[0])


class _InOrderEngineIOClient(engineio.Client):
    """python-engineio's client runs each message handler in a thread of its own,
    which can reorder messages under load; a test must see wire order."""

    def _trigger_event(self, event, *args, **kwargs):
        kwargs["run_async"] = False
        return super()._trigger_event(event, *args, **kwargs)


class InOrderClient(socketio.Client):
    """A python-socketio client that handles events in the order they arrive."""

    def _engineio_client_class(self):
        return _InOrderEngineIOClient


class Listener:
    """A python-socketio client on /notifications that records what it receives,
    in the order it arrives.

    With ``resume=True`` it reconnects by itself, each time sending the
    newest id it has received as ``last_id``, as a browser does.
    """

    def __init__(self, server, token, last_id=None, resume=False, url=None):
        self.received = []
        self.arrivals = []  # time.time() at which each received notification arrived
        self.resets = []
        self.reads = []
        self.replays = []  # the server's `replayed` events: where the connection went live
        self.frame_sizes = []  # notifications per frame received, in order
        self.last_id = last_id
        self.token = token
        self.lock = threading.Lock()
        self.sio = InOrderClient(reconnection=resume, reconnection_delay=0.2,
                                   reconnection_delay_max=1)
        self.sio.on("notification", self._one, namespace=NAMESPACE)
        self.sio.on("notifications", self._many, namespace=NAMESPACE)
        self.sio.on("reset", self.resets.append, namespace=NAMESPACE)
        self.sio.on("read", self.reads.append, namespace=NAMESPACE)
        self.sio.on("replayed", self.replays.append, namespace=NAMESPACE)
        self.sio.connect(url or server.url, namespaces=[NAMESPACE], auth=self._auth,
                         transports=["websocket"], wait_timeout=5)
        OPEN_LISTENERS.add(self)

    def _auth(self):
        auth = {"token": self.token}
        if self.last_id:
            auth["last_id"] = self.last_id
        return auth

    def _one(self, envelope):
        self._many([envelope])

    def _many(self, envelopes):
        now = time.time()
        with self.lock:
            self.frame_sizes.append(len(envelopes))
            self.received.extend(envelopes)
            self.arrivals.extend(now for _ in envelopes)
            if envelopes:
                self.last_id = envelopes[-1]["id"]

    def call(self, event, data):
        return self.sio.call(event, data, namespace=NAMESPACE, timeout=5)

    def ids(self):
        with self.lock:
            return [n["id"] for n in self.received]

    def topics(self):
        with self.lock:
            return [n["topic"] for n in self.received]

    def close(self):
        """Disconnect, or stop reconnecting if the server is gone."""
        OPEN_LISTENERS.discard(self)
        self.sio.shutdown()


def marked(publish, listener, user, timeout=10):
    """Publish a marker private to ``user`` and wait until ``listener`` has it; returns
    its id. A connection gets its notifications in id order, so whatever was
    published before the marker and meant for ``listener`` has reached it by then:
    what has not is not coming (no sleeping, then asserting that nothing came)."""
    marker = publish("test.marker", "marker", user=user)
    wait_until(lambda: marker in listener.ids(), timeout=timeout, message="the marker")
    return marker


# Listeners not closed yet: whatever a test left open (it failed before its
# close, say) is closed after it, so that no reconnecting client outlives its
# test and disturbs the next ones (tests/conftest.py).
OPEN_LISTENERS = set()


CSRF_RE = r'name="csrf_token" value="([^"]+)"'


def sign_in(client, name, password):
    """Sign in through the real form (CSRF token included); returns the reply."""
    page = client.get("/login").get_data(as_text=True)
    token = re.search(CSRF_RE, page).group(1)
    return client.post("/login", data={"username": name, "password": password,
                                       "csrf_token": token})


def csrf_of_dashboard(client):
    """The CSRF token the dashboard page hands its scripts."""
    page = client.get("/").get_data(as_text=True)
    config = re.search(r'id="herald-config">(.*?)</script>', page, re.S).group(1)
    return json.loads(config)["csrfToken"]


def cpu_seconds(pids):
    """CPU time (user + system) used so far by the processes ``pids``, together."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def rss_mb(pid):
    """Resident memory of process ``pid`` in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


class StalledClient:
    """Speaks Engine.IO/Socket.IO v5 over a raw websocket, subscribes, then never reads again."""

    def __init__(self, server, token, topic):
        url = server.url.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket"
        self.ws = websocket.create_connection(
            url, timeout=5, sockopt=[(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)])
        assert self.ws.recv().startswith("0")  # Engine.IO open
        self.ws.send("40/notifications," + json.dumps({"token": token}))
        assert self.ws.recv().startswith("40/notifications")
        assert self.ws.recv().startswith('42/notifications,["replayed",')
        self.ws.send('42/notifications,1["subscribe",' + json.dumps({"topics": [topic]}) + "]")
        assert '"ok":true' in self.ws.recv()

    def close(self):
        self.ws.close()


def flood_reads(server, token, events):
    """A raw websocket client that joins, then sends ``events`` ``read`` events as fast
    as its socket takes them (until the server cuts it off); returns the websocket."""
    ws = websocket.create_connection(server.url.replace("http", "ws")
                                     + "/socket.io/?EIO=4&transport=websocket", timeout=5)
    ws.recv()
    ws.send(f"40{NAMESPACE}," + json.dumps({"token": token}))
    ws.recv()
    frame = f'42{NAMESPACE},["read",{{"upto":"1-0"}}]'
    try:
        for _ in range(events):
            ws.send(frame)
    except (OSError, websocket.WebSocketException):
        pass  # cut off: what a flood is for
    return ws


class Inbox:
    """aiosmtpd handler: keeps every message it accepts, parsed."""

    def __init__(self):
        self.messages = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self.lock:
            self.messages.append(message)
        return "250 OK"


class SmtpServer:
    def __init__(self):
        self.port = free_port()
        self.inbox = Inbox()
        self.controller = None

    @property
    def url(self):
        return f"smtp://127.0.0.1:{self.port}"

    @property
    def messages(self):
        with self.inbox.lock:
            return list(self.inbox.messages)

    def start(self):
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self):
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


current_redis = None  # the test's Redis client, set by the ``redis`` fixture (conftest.py)


def issue_token(name, secret="test-secret-key"):
    """A token for user ``name`` as Herald issues it: bound to the user's current token key."""
    from app.users import accounts
    from app.web.auth import tokens
    user = accounts.get_user(current_redis, name)
    return tokens.issue(secret, name, user["token_key"] if user else "")


class EventStream:
    """A plain HTTP client of ``GET /api/stream`` (requests, no SSE library): it
    parses the events as they come, in order, with a bounded wait for each read."""

    def __init__(self, server, token=None, last_id=None, header_last_id=None, params=None,
                 read_timeout=10):
        headers = {"Accept": "text/event-stream"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if header_last_id:
            headers["Last-Event-ID"] = header_last_id
        params = dict(params or {})
        if last_id:
            params["last_id"] = last_id
        self.response = requests.get(server.url + "/api/stream", headers=headers, params=params,
                                     stream=True, timeout=(5, read_timeout))
        self.lines = self.response.iter_lines(decode_unicode=True) if self.response.ok else None
        self.comments = []

    def next_event(self):
        """The next event as ``(name, id, data)`` (data parsed as JSON); comments are kept."""
        name, entry_id, data = "message", None, []
        for line in self.lines:
            if line == "":
                if data:
                    return name, entry_id, json.loads("\n".join(data))
                name, entry_id = "message", None
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "":
                self.comments.append(value)
            elif field == "event":
                name = value
            elif field == "id":
                entry_id = value
            elif field == "data":
                data.append(value)
        raise AssertionError("the stream ended")

    def events_until(self, name, most=10_000):
        """Events up to and including the first named ``name``."""
        seen = []
        for _ in range(most):
            seen.append(self.next_event())
            if seen[-1][0] == name:
                return seen
        raise AssertionError(f"no {name} event in {most}")

    def close(self):
        self.response.close()
