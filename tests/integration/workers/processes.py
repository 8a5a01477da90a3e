"""Worker processes for tests: ``python -m workers.<name>`` on the test's Redis.

:class:`WorkerProcesses` starts as many as a test wants (each with its own
log file and environment) and stops every one it started when the ``with``
block ends: SIGTERM, then SIGKILL after a bounded wait. Every wait is bounded.
"""
import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson

from app.ops import processes
from app.ops.heartbeats import BEATS
from tests.support import ROOT, wait_until

# What each worker logs once it is running (LOG_FORMAT=text).
READY = {"workers.digest": "collecting digests as", "workers.archiver": "archiving into",
         "workers.webhooks": "delivering webhooks"}


class WorkerProcess:
    def __init__(self, module, redis_url, folder, number, **env):
        self.module = module
        self.log_path = Path(folder) / f"{module.split('.')[-1]}-{number}.log"
        self.env = {**os.environ, "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1",
                    "LOG_FORMAT": "text", "HEARTBEAT_INTERVAL": "0.5", **env}
        self.process = None

    @property
    def pid(self):
        return self.process.pid

    def start(self):
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", self.module], cwd=ROOT,
                                        env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(self._ready, timeout=20, message=f"{self.module} to start ({self.log_path})")
        return self

    def _ready(self):
        if self.process.poll() is not None:
            raise AssertionError(f"{self.module} exited: {self.output()}")
        return READY[self.module] in self.output()

    def output(self):
        return self.log_path.read_text()

    def pause(self):
        self.process.send_signal(signal.SIGSTOP)

    def resume(self):
        self.process.send_signal(signal.SIGCONT)

    def kill(self):
        """SIGKILL, as a crash or a lost host would."""
        self.process.kill()
        self.process.wait(10)

    def stop(self):
        """SIGTERM (a clean stop), then SIGKILL if it does not stop within 20 s."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a paused one must run to stop
        processes.stop(self.process, 20)
        if not self.log.closed:
            self.log.close()


class WorkerProcesses:
    """``with WorkerProcesses(redis_url, folder) as start:`` ``start("workers.digest", X="1")``."""

    def __init__(self, redis_url, folder):
        self.redis_url, self.folder = redis_url, folder
        self.started = []

    def __call__(self, module, **env):
        worker = WorkerProcess(module, self.redis_url, self.folder, len(self.started) + 1, **env)
        self.started.append(worker)
        return worker.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for worker in self.started:
            worker.stop()


def beats(redis, role):
    """``{instance: record}`` of the heartbeats of ``role`` in Redis now."""
    found = {}
    for raw in redis.hgetall(BEATS).values():
        record = orjson.loads(raw)
        if record["role"] == role:
            found[record["instance"]] = record
    return found
