"""Launching the Spark rollup job from the web app and the CLI, and reading its result.

The job runs as a process of its own (``python -m workers.spark.jobs.rollup``),
never inside a web process: it needs a JVM and may run for minutes. Its
progress and outcome come back as ``spark.job.*`` notifications like any
other publisher's; its output is read from ``ROLLUP_DIR/summary.json``.
"""
import json
import subprocess
import sys
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


def launch_rollup(config, runs, user):
    """Start a rollup in the background for ``user``; returns its correlation id.

    Its output goes to ``SPARK_LOG_DIR/<correlation id>.log``.
    """
    correlation_id = f"spark-rollup-{uuid.uuid4().hex[:12]}"
    logs = Path(config["SPARK_LOG_DIR"])
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / f"{correlation_id}.log", "wb") as log:
        process = subprocess.Popen(
            rollup_command(config["ARCHIVE_DIR"], config["ROLLUP_DIR"], user, correlation_id),
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
    runs.add(correlation_id, process)
    return correlation_id


def latest_summary(config):
    """The newest rollup's summary (see workers/spark/jobs/rollup.py), or None."""
    path = Path(config["ROLLUP_DIR"]) / "summary.json"
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
