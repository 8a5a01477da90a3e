"""What `make run` starts (bin/stack.py), run for real with no REDIS_URL."""
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from app.redis_client import connect
from app.stream.keys import STREAM
from herald_client.zmq import Publisher
from tests.support import ROOT, Supervised, free_port, wait_until


def bridge_endpoints():
    """Free loopback ports for the ZeroMQ bridge the stack starts."""
    return {name: f"tcp://127.0.0.1:{free_port()}"
            for name in ("BRIDGE_PULL", "BRIDGE_ROUTER", "BRIDGE_XPUB")}


class Stack(Supervised):
    """bin/stack.py in its own process on free ports, its output collected line by line."""

    def __init__(self, var, **env):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        environment = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SECRET_KEY")}
        self.bridge = bridge_endpoints()
        environment.update(VAR_DIR=str(var), PORT=str(self.port), **self.bridge, **env)
        super().__init__("bin/stack.py", environment)

    def wait_ready(self):
        wait_until(lambda: "Herald is at" in self.output(), timeout=30, message="stack start")
        wait_until(self._healthy, timeout=30, message="healthz")

    def _healthy(self):
        try:
            return requests.get(self.url + "/healthz", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def interrupt(self):
        """Ctrl-C, and wait for a clean exit."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(30)
        self.reader.join(5)
        return code

    def kill(self):
        """Make sure the stack is gone (a no-op after a clean interrupt)."""
        self.stop()


@pytest.fixture
def var(tmp_path):
    return tmp_path / "var"


def test_make_run_stack(var, smtp_server):
    stack = Stack(var, DEMO="1", DEMO_INTERVAL="0.2", SMTP_URL=smtp_server.url)
    try:
        stack.wait_ready()
        out = stack.output()
        assert f"Herald is at http://127.0.0.1:{stack.port}/" in out
        password = re.search(r"password:\s+(\S+)", out).group(1)
        reply = requests.post(stack.url + "/auth/token",
                              json={"username": "admin", "password": password}, timeout=5)
        assert reply.status_code == 200

        sock = var / "redis" / "redis.sock"
        assert sock.exists()
        private = connect(f"unix://{sock}")
        wait_until(lambda: private.xlen(STREAM) >= 3, timeout=15, message="demo notifications")

        # The CLI in another shell finds the private Redis with no REDIS_URL.
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env["VAR_DIR"] = str(var)
        done = subprocess.run([sys.executable, "-m", "flask", "--app", "wsgi", "notify",
                               "cli.found", "found it"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr

        # The ZeroMQ bridge runs too, on the same private Redis.
        bridge_up = '"logger":"herald.bridge","message":"listening'  # a JSON log line
        wait_until(lambda: bridge_up in stack.output(), timeout=30,
                   message="the bridge")
        with Publisher(stack.bridge["BRIDGE_ROUTER"], confirmed=True) as publisher:
            bridged = publisher.publish("zmq.found", "through the bridge")
        assert private.xrange(STREAM, min=bridged, max=bridged)
        # ... and the archiver, into var/archive.
        archived = var / "archive"
        wait_until(lambda: bridged.encode() in b"".join(
            p.read_bytes() for p in archived.glob("date=*/notifications.jsonl")),
            timeout=30, message="the archiver")

        # ... and the digest worker, to a real SMTP server: a critical one goes at once.
        token = reply.json()["token"]
        made = requests.post(stack.url + "/api/digests", timeout=5,
                             headers={"Authorization": f"Bearer {token}"},
                             json={"email": "admin@example.com", "topics": ["alarm"],
                                   "critical_now": True})
        assert made.status_code == 201, made.text
        with Publisher(stack.bridge["BRIDGE_ROUTER"], confirmed=True) as publisher:
            publisher.publish("alarm.fire", "Fire in the server room", severity="critical")
        wait_until(lambda: smtp_server.messages, timeout=30, message="the critical email")
        assert smtp_server.messages[0]["Subject"] == "[critical] Fire in the server room"
        kept = private.xlen(STREAM)
        private.close()

        assert stack.interrupt() == 0
        assert "stopped" in stack.output()
        assert not sock.exists()  # redis-server shut down and removed its socket
        assert (var / "redis" / "appendonlydir").is_dir()
    finally:
        stack.kill()

    # A second run keeps the data and the account, and prints no new password.
    again = Stack(var)
    try:
        again.wait_ready()
        assert "password:" not in again.output()
        private = connect(f"unix://{var / 'redis' / 'redis.sock'}")
        assert private.xlen(STREAM) >= kept
        private.close()
        assert again.interrupt() == 0
    finally:
        again.kill()


def test_port_in_use_is_a_clear_error(var):
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env.update(VAR_DIR=str(var), PORT=str(port))
        done = subprocess.run([sys.executable, "bin/stack.py"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert f"127.0.0.1:{port} is in use" in done.stderr


def test_several_web_processes_share_the_port(var):
    stack = Stack(var, WEB_PROCESSES="2")
    try:
        stack.wait_ready()
        assert "2 web processes" in stack.output()
        answered = set()

        def both_answer():
            answered.add(requests.get(stack.url + "/healthz", timeout=5).json()["process"])
            return len(answered) == 2
        wait_until(both_answer, timeout=30, interval=0.05, message="both web processes answering")
        assert stack.interrupt() == 0
    finally:
        stack.kill()


@pytest.mark.parametrize("value", ["0", "two", "100"])
def test_a_bad_web_process_count_is_a_clear_error(var, value):
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(VAR_DIR=str(var), PORT=str(free_port()), WEB_PROCESSES=value)
    done = subprocess.run([sys.executable, "bin/stack.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert f"WEB_PROCESSES must be a whole number from 1 to 64, not {value!r}" in done.stderr


def children_of(pid):
    """The pids of ``pid``'s direct children, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_killed_supervisor_takes_its_children_and_a_second_stack_is_refused(var):
    stack = Stack(var)
    try:
        stack.wait_ready()
        children = children_of(stack.process.pid)
        assert len(children) >= 5  # redis-server, web, bridge, archiver, digest worker
        second = subprocess.run([sys.executable, "bin/stack.py"], cwd=ROOT, timeout=30,
                                env=dict(os.environ, VAR_DIR=str(var), PORT=str(free_port())),
                                capture_output=True, text=True)
        assert second.returncode != 0
        assert f"a stack already runs here (pid {stack.process.pid})" in second.stderr
        stack.process.kill()  # SIGKILL: no chance to stop anything itself
        stack.process.wait(10)
        wait_until(lambda: not any(alive(pid) for pid in children), timeout=20,
                   message="the children to die with their supervisor")
    finally:
        stack.kill()
    again = Stack(var)  # the stale pid file is taken over, the ports are free
    try:
        again.wait_ready()
        assert "taking over from a stack" in again.output()
    finally:
        again.kill()


@pytest.mark.parametrize("setting, value, message", [
    ("PORT", "http", "PORT must be a whole number from 1 to 65535, not 'http'"),
    ("REDIS_URL", "mysql://db/0", "REDIS_URL must start with redis://"),
    ("REDIS_URL", "redis://localhost:99999/0", "REDIS_URL has a port that is not a number"),
    ("TOKEN_TTL", "an hour", "TOKEN_TTL must be a whole number, not 'an hour'"),
])
def test_a_bad_setting_is_one_line_at_start(var, setting, value, message):
    for command in (["bin/stack.py"], ["wsgi.py"]):
        done = subprocess.run([sys.executable, *command], cwd=ROOT, timeout=60, text=True,
                              env=dict(os.environ, VAR_DIR=str(var), **{setting: value}),
                              capture_output=True)
        assert done.returncode != 0, command
        assert message in done.stderr, (command, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (command, done.stderr[-2000:])


def test_a_bad_smtp_port_is_one_line_and_shown_by_readyz(redis_server, redis, tmp_path):
    from app.ops import worker_health
    done = subprocess.run([sys.executable, "-m", "workers.digest"], cwd=ROOT, timeout=60,
                          text=True, capture_output=True,
                          env=dict(os.environ, REDIS_URL=redis_server.url,
                                   SMTP_URL="smtp://mail.example:nope"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "SMTP_URL: the port of 'smtp://mail.example:nope' must be a number" in done.stderr
    assert "SMTP_URL" in worker_health.faults(redis)["digest worker"]["detail"]


def test_the_private_redis_is_restarted_after_it_dies(var):
    """redis-server killed outright (SIGKILL) is started again, on the same socket with
    the same data, and the web process is ready again on it."""
    stack = Stack(var)
    try:
        stack.wait_ready()
        sock = var / "redis" / "redis.sock"
        private = connect(f"unix://{sock}")
        private.set("herald:test:kept", "yes")
        private.close()
        (first,) = [pid for pid in children_of(stack.process.pid)
                    if Path(f"/proc/{pid}/comm").read_text().strip() == "redis-server"]
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: "private redis-server exited" in stack.output(), timeout=20,
                   message="the stack to see redis-server die")

        def answers():
            client = connect(f"unix://{sock}", socket_connect_timeout=0.5)
            try:
                return client.ping() and client
            except Exception:
                client.close()
                return False
        client = wait_until(answers, timeout=30, message="redis-server to answer again")
        assert client.get("herald:test:kept") == b"yes"  # the append-only file was read back
        client.close()

        def ready():
            try:
                return requests.get(stack.url + "/readyz", timeout=2).status_code == 200
            except requests.RequestException:
                return False
        wait_until(ready, timeout=30, message="/readyz after Redis came back")
        children = children_of(stack.process.pid)
        assert first not in children
        assert stack.interrupt() == 0
        wait_until(lambda: not any(alive(pid) for pid in children), timeout=20,
                   message="every child to stop")
        assert not sock.exists()
    finally:
        stack.kill()
