"""Runs the whole Herald stack in the foreground: what ``make run`` starts.

- With ``REDIS_URL`` unset, a private redis-server on a unix socket under
  ``var/redis/`` (append-only file on, fsync'd on every write, so a
  notification that was accepted survives a crash of Redis), which the web process, the workers
  and ``flask --app wsgi …`` in another shell all find by default.
- The first time, an ``admin`` account whose password is printed once.
- The web server (``wsgi.py``) on ``HOST``:``PORT`` (127.0.0.1:5000), as
  ``WEB_PROCESSES`` processes (default 1) sharing the port (SO_REUSEPORT), and the
  workers: the ZeroMQ bridge (ports 5557-5559, see workers/zmq_bridge.py)
  the archiver (var/archive/, the Spark rollup's input), the digest
  worker (emails through ``SMTP_URL``) and the webhook worker; with ``DEMO=1`` also a demo publisher.
- Settings: the environment, then the project's ``.env`` (``ENV_FILE``), which
  ``make example`` and ``bin/flask`` read too: ``VAR_DIR=…`` once there.
- Logs: the children write to the supervisor's stderr, as text when that is a
  terminal and as JSON lines otherwise (``LOG_FORMAT`` overrides).
- A child that dies is restarted with backoff, the private redis-server too (same
  socket, same data). Ctrl-C (or SIGTERM) stops the
  children, then the private redis-server, and exits. Every child dies with
  the supervisor even when it is killed outright (SIGKILL): the kernel sends
  them SIGTERM (PR_SET_PDEATHSIG). ``var/stack.pid`` names the running
  supervisor, so a second ``make run`` on the same ``VAR_DIR`` says so.
"""
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.ops import logs, processes
from app.redis_client import UNAVAILABLE, connect  # noqa: E402
from app.settings import (  # noqa: E402
    Config,
    child_environment,
    export_default,
    get,
    load_env_file,
    private_redis_socket,
    var_dir,
)
from app.settings import port as config_port  # noqa: E402
from app.users import (
    accounts,  # noqa: E402
    subscriptions,
)

PY = sys.executable


def say(message):
    print(f"herald: {message}", flush=True)


def port_free(host, port):
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def wait_for_redis(url, seconds):
    client = connect(url, socket_connect_timeout=0.5)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            client.ping()
            return client
        except UNAVAILABLE:
            time.sleep(0.1)
    return None


class PrivateRedis:
    """A redis-server of our own on a unix socket under var/redis/, supervised like
    the other children: killed or crashed, it is started again with backoff, on the
    same socket with the same data directory (its append-only file read back). The
    web processes and workers ride out the gap (they retry Redis with backoff)."""

    def __init__(self):
        self.sock = private_redis_socket()
        self.url = f"unix://{self.sock}"
        folder = self.sock.parent
        self.child = Child("private redis-server", [
            "redis-server", "--port", "0", "--unixsocket", str(self.sock),
            "--unixsocketperm", "700", "--dir", str(folder), "--appendonly", "yes",
            "--appendfsync", "always",
            "--save", "", "--logfile", str(folder / "redis.log")], None)

    def start(self):
        folder = self.sock.parent
        folder.mkdir(parents=True, exist_ok=True)
        if self.sock.exists():
            if wait_for_redis(self.url, 0.5):
                say(f"using the private redis-server already running at {self.sock}")
                return
            self.sock.unlink()  # left by a redis-server that died
        self.child.start()
        if not wait_for_redis(self.url, 10):
            self.stop()
            raise SystemExit(f"herald: redis-server did not start; see {folder / 'redis.log'}")
        say(f"private redis-server started (data in {folder})")

    def check(self):
        """Start redis-server again when it has died (redis-server replaces the socket
        file it left); not when it is another stack's, already running at start."""
        self.child.check()

    def stop(self):
        processes.stop(self.child.process)  # redis-server flushes its append-only file on SIGTERM


class Child:
    """A supervised child process, restarted with backoff when it dies."""

    def __init__(self, name, argv, env):
        self.name, self.argv, self.env = name, argv, env
        self.process = None
        self.backoff = 1.0
        self.restart_at = 0.0

    def start(self):
        self.process = subprocess.Popen(self.argv, cwd=ROOT, env=self.env, start_new_session=True,
                                        preexec_fn=processes.die_with_parent)
        self.started = time.monotonic()

    def check(self):
        """Restart the child when it has died (after its backoff)."""
        if self.process is None or self.process.poll() is None:
            return
        now = time.monotonic()
        if not self.restart_at:
            if now - self.started > 30:
                self.backoff = 1.0
            say(f"{self.name} exited with {self.process.returncode}; restarting in {self.backoff:.0f} s")
            self.restart_at = now + self.backoff
            self.backoff = min(self.backoff * 2, 30)
        elif now >= self.restart_at:
            self.restart_at = 0.0
            self.start()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()

    def wait(self, seconds):
        if self.process is None:
            return
        try:
            self.process.wait(seconds)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def ensure_admin(client):
    """Create the first admin when there are no users, and print its password once."""
    if accounts.count_users(client):
        return
    password = secrets.token_urlsafe(12)
    accounts.create_user(client, "admin", password, admin=True)
    subscriptions.add(client, "admin", ["*"], limit=100)
    say("created the first account (shown only this once):")
    say("    user name: admin")
    say(f"    password:  {password}")


def web_process_count():
    """``WEB_PROCESSES``: how many web processes to run, 1 when unset."""
    return get("WEB_PROCESSES")


def stack_pid(folder):
    """The pid named by ``folder``'s ``stack.pid`` (another process's, not this one's),
    and whether that process still runs: ``(None, False)`` when there is none."""
    try:
        other = int((folder / "stack.pid").read_text())
    except (OSError, ValueError):
        return None, False
    if other == os.getpid():
        return None, False
    try:
        os.kill(other, 0)
    except ProcessLookupError:
        return other, False
    except PermissionError:
        pass  # another user's process: it runs
    return other, True


def claim_pidfile():
    """Write ``var/stack.pid``; refuse with a clear message when a stack already runs
    on this VAR_DIR (a pid file of a process that is gone is stale: taken over)."""
    path = var_dir() / "stack.pid"
    other, running = stack_pid(var_dir())
    if other and not running:
        say(f"taking over from a stack (pid {other}) that did not stop cleanly")
    elif running:
        raise SystemExit(f"herald: a stack already runs here (pid {other}); stop it "
                         f"(Ctrl-C in its terminal, or kill {other}) or use another VAR_DIR")
    path.write_text(str(os.getpid()))
    return path


def main(extra_env=None, extra_children=None):
    """Run the stack until Ctrl-C. ``extra_env`` is added to every child's
    environment; ``extra_children(client, env)``, when given, returns more
    children to supervise (``make example`` adds the example app so). The project's
    ``.env`` is read first (``VAR_DIR=…`` written once there)."""
    load_env_file()
    host = get("HOST")
    port = config_port()
    web_processes = web_process_count()
    var_dir().mkdir(parents=True, exist_ok=True)
    Config()  # a setting that cannot work ends here, in one line, not in a restarting child
    # Decided once, here: text logs when `make run` writes to a terminal, JSON when its
    # output goes to a file or a pipe (the children write to the same stderr).
    export_default("LOG_FORMAT", logs.choose_format(sys.stderr))
    pidfile = claim_pidfile()
    try:
        run(host, port, web_processes, extra_env, extra_children)
    finally:
        pidfile.unlink(missing_ok=True)


def run(host, port, web_processes, extra_env, extra_children):
    if not port_free(host, port):
        raise SystemExit(f"herald: {host}:{port} is in use; set PORT to another port")
    redis_server = None
    env = child_environment(HOST=host, PORT=str(port), PYTHONUNBUFFERED="1", **(extra_env or {}))
    if not get("REDIS_URL"):
        redis_server = PrivateRedis()
        redis_server.start()
        env["REDIS_URL"] = redis_server.url
    client = wait_for_redis(env["REDIS_URL"], 10)
    if client is None:
        if redis_server:
            redis_server.stop()
        raise SystemExit(f"herald: Redis at {env['REDIS_URL']} does not answer")

    stopping = []
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))

    web_env = dict(env, REUSE_PORT="1") if web_processes > 1 else env
    children = [Child(f"web {n + 1}" if web_processes > 1 else "web", [PY, "wsgi.py"], web_env)
                for n in range(web_processes)]
    children += [Child("zmq bridge", [PY, "-m", "workers.zmq_bridge"], env),
                Child("archiver", [PY, "-m", "workers.archiver"], env),
                Child("digest worker", [PY, "-m", "workers.digest"], env),
                Child("webhook worker", [PY, "-m", "workers.webhooks"], env)]
    if get("DEMO"):
        children.append(Child("demo publisher", [PY, "-m", "workers.demo"], env))
    try:
        ensure_admin(client)
        if extra_children:
            children += extra_children(client, env)
        for child in children:
            child.start()
        processes_note = f", {web_processes} web processes" if web_processes > 1 else ""
        say(f"Herald is at http://{host}:{port}/  (Ctrl-C stops it{processes_note})")
        while not stopping:
            time.sleep(0.2)
            if redis_server:
                redis_server.check()
            for child in children:
                child.check()
    finally:
        say("stopping")
        for child in children:
            child.stop()
        for child in children:
            child.wait(10)
        if redis_server:
            redis_server.stop()
        say("stopped")


if __name__ == "__main__":
    main()
