"""Launching the Spark rollup job from the web app and the CLI, and reading its result.

The job runs as a process of its own (``python -m workers.spark.jobs.rollup``),
never inside a web process: it needs a JVM and may run for minutes. Its
progress and outcome come back as ``spark.job.*`` notifications like any
other publisher's; its output is read from ``ROLLUP_DIR/summary.json``.
"""
import json
import subprocess
import sys
import threading
import uuid
from pathlib import Path

from .config import ROOT


def rollup_command(archive, out, user=None, correlation_id=None, master=None):
    command = [sys.executable, "-m", "workers.spark.jobs.rollup", "--archive", str(archive),
               "--out", str(out)]
    if user:
        command += ["--user", user]
    if correlation_id:
        command += ["--correlation-id", correlation_id]
    if master:
        command += ["--master", master]
    return command


class Runs:
    """The job processes this web process started, by correlation id.

    Finished ones are reaped (waited for) whenever another starts, so a web
    process that runs for months collects no zombies.
    """

    def __init__(self):
        self.processes = {}

    def reap(self):
        for correlation_id, process in list(self.processes.items()):
            if process.poll() is not None:
                del self.processes[correlation_id]

    def add(self, correlation_id, process):
        self.reap()
        self.processes[correlation_id] = process


LOCK = "herald:spark:rollup:running"  # the correlation id of the rollup running now
LOCK_TTL = 900     # seconds; kept alive while the job runs, so a lost web process frees it
LOCK_REFRESH = 30  # seconds between the launching process's looks at its job


class RollupRunning(RuntimeError):
    """A rollup runs already (one at a time: a second would race the first's output)."""

    def __init__(self, correlation_id):
        super().__init__(f"a rollup is running already ({correlation_id}); wait for it to end")
        self.correlation_id = correlation_id


def running_rollup(client):
    """The correlation id of the rollup running now, or None."""
    value = client.get(LOCK)
    return value.decode() if value else None


# Delete the lock only while it still names this run (a later run may hold it).
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


def release(client, correlation_id):
    """Free the lock if ``correlation_id`` holds it; True when it did."""
    return bool(client.eval(_RELEASE, 1, LOCK, correlation_id))


def _watch(client, correlation_id, process, refresh=None):
    """Keep the lock while the job runs; free it the moment the job ends, so the
    Jobs page's button (which the job's last notification re-enables) is not
    refused for a run that has already finished."""
    refresh = LOCK_REFRESH if refresh is None else refresh
    while True:
        try:
            process.wait(refresh)
            break
        except subprocess.TimeoutExpired:
            if client.get(LOCK) == correlation_id.encode():
                client.expire(LOCK, LOCK_TTL)
    release(client, correlation_id)


def launch_rollup(config, runs, user, client=None):
    """Start a rollup in the background for ``user``; returns its correlation id.

    Its output goes to ``SPARK_LOG_DIR/<correlation id>.log``. With ``client``
    (Redis) only one runs at a time across every web process: RollupRunning.
    """
    correlation_id = f"spark-rollup-{uuid.uuid4().hex[:12]}"
    if client is not None and not client.set(LOCK, correlation_id, nx=True, ex=LOCK_TTL):
        raise RollupRunning(running_rollup(client) or "just ending")
    try:
        logs = Path(config["SPARK_LOG_DIR"])
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / f"{correlation_id}.log", "wb") as log:
            process = subprocess.Popen(
                rollup_command(config["ARCHIVE_DIR"], config["ROLLUP_DIR"], user, correlation_id),
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
    except BaseException:
        if client is not None:  # nothing started: the next press may try again at once
            release(client, correlation_id)
        raise
    runs.add(correlation_id, process)
    if client is not None:
        threading.Thread(target=_watch, args=(client, correlation_id, process),
                         daemon=True).start()
    return correlation_id


def latest_summary(config):
    """The newest rollup's summary (see workers/spark/jobs/rollup.py), or None."""
    path = Path(config["ROLLUP_DIR"]) / "summary.json"
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
