"""Launching the Spark rollup job from the web app and the CLI, and reading its result.

The job runs as a process of its own, never inside a web process: it needs a
JVM and may run for minutes. Its progress and outcome come back as
``spark.job.*`` notifications like any other publisher's (the driver, which
runs in that process, publishes them to ``REDIS_URL``); its output is read
from ``ROLLUP_DIR/summary.json``.

On a local master (``local``, ``local[N]``, the default ``local[*]``) that
process is ``python -m workers.spark.jobs.rollup``: one JVM does everything.
On a cluster master (``spark://…``, ``yarn``, ``k8s://…``) the executors are
JVMs, with Python workers, of their own on other machines, so it is
``spark-submit`` in client mode (the driver stays here: it publishes to
Redis and writes ``summary.json`` where this host reads it) with what the
executors need: a Python (by default this virtualenv's interpreter, at the
same path on every node; ``spark.pyspark.python`` in spark-defaults.conf
or ``PYSPARK_PYTHON`` says otherwise, see docs/spark.md), the
project's code as a zip of ``app`` and ``workers`` (``--py-files``: Spark
ships it from the driver, no shared code folder needed), and absolute
archive and output paths, which must be on storage every node mounts at that
path. docs/spark.md has the commands to run by hand, on YARN and Kubernetes too.
"""
import json
import os
import subprocess
import sys
import threading
import uuid
import zipfile
from pathlib import Path

from app.settings import ROOT, child_environment, get, var_dir
from app.spark.masters import is_local

PROJECT_PACKAGES = ("app", "workers")  # what the job imports; shipped to cluster executors
PROJECT_ZIP = "herald-project.zip"
ROLLUP_SCRIPT = ROOT / "workers" / "spark" / "jobs" / "rollup.py"


def spark_submit():
    """PySpark's own ``bin/spark-submit``: its Spark is the pip package (the one the
    driver imports), unless ``SPARK_HOME`` names a Spark installation, which the
    script then uses instead (a cluster's own, with its Hadoop/YARN settings)."""
    import importlib.util
    spec = importlib.util.find_spec("pyspark")
    return Path(spec.origin).parent / "bin" / "spark-submit"


def project_zip(folder):
    """Write the project's Python packages (``app``, ``workers``: .py files only) to
    ``folder/herald-project.zip`` and return its path.

    Rewritten on every launch (it is small), through a temporary name and a
    rename, so a job never reads a half-written zip and always gets the code
    of the process launching it.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / PROJECT_ZIP
    partial = folder / f".{PROJECT_ZIP}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for package in PROJECT_PACKAGES:
                for path in sorted((ROOT / package).rglob("*.py")):
                    if "__pycache__" not in path.parts:
                        archive.write(path, path.relative_to(ROOT).as_posix())
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def cluster_conf():
    """The ``--conf`` settings a cluster run gets from the launcher, as a dict.

    The driver runs this virtualenv's Python (it imports ``app``: Redis, the
    bus). The executors' Python is left to ``spark.pyspark.python`` (set in
    spark-defaults.conf, or with ``conf``), else ``PYSPARK_PYTHON``, else
    the job makes it the driver's interpreter (workers/spark/jobs/rollup.py
    ``session``): the same path on every node, which a packed or per-image
    virtualenv overrides.
    """
    return {"spark.pyspark.driver.python": sys.executable}


def rollup_command(archive, out, user=None, correlation_id=None, master=None, scratch=None,
                   conf=None):
    """The command that runs the rollup on ``master`` (default ``SPARK_MASTER``, else local[*]).

    Local masters: ``python -m workers.spark.jobs.rollup …``. Cluster masters:
    ``spark-submit --master … --deploy-mode client --py-files <zip> --conf …
    workers/spark/jobs/rollup.py …``, the zip written to ``scratch`` (default
    ``var/spark``); ``conf`` adds or overrides ``--conf`` settings. The archive
    and output paths are made absolute here (relative to the caller's working
    folder): executors do not share the driver's working folder.
    """
    master = master or get("SPARK_MASTER") or None
    job = ["--archive", os.path.abspath(archive), "--out", os.path.abspath(out)]
    if user:  # one word: a user id may begin with '-', which argparse would take for an option
        job += [f"--user={user}"]
    if correlation_id:
        job += ["--correlation-id", correlation_id]
    if master:
        job += ["--master", master]
    if is_local(master):
        return [sys.executable, "-m", "workers.spark.jobs.rollup", *job]
    settings = dict(cluster_conf(), **(conf or {}))
    command = [str(spark_submit()), "--master", master, "--deploy-mode", "client",
               "--name", "herald-rollup",
               "--py-files", str(project_zip(scratch or var_dir() / "spark"))]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    return command + [str(ROLLUP_SCRIPT), *job]


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
    The job gets this app's ``REDIS_URL`` (its driver publishes the job's
    notifications there, wherever the master is).
    """
    correlation_id = f"spark-rollup-{uuid.uuid4().hex[:12]}"
    if client is not None and not client.set(LOCK, correlation_id, nx=True, ex=LOCK_TTL):
        raise RollupRunning(running_rollup(client) or "just ending")
    try:
        logs = Path(config["SPARK_LOG_DIR"])
        logs.mkdir(parents=True, exist_ok=True)
        command = rollup_command(config["ARCHIVE_DIR"], config["ROLLUP_DIR"], user,
                                 correlation_id, scratch=logs)
        env = child_environment(REDIS_URL=config.get("REDIS_URL"))
        with open(logs / f"{correlation_id}.log", "wb") as log:
            process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)
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
