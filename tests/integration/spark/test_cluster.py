"""The rollup on a real Spark standalone cluster, launched the way Herald launches it.

``SPARK_MASTER=spark://…`` had only ever been run on ``local[*]``, where the
driver and the tasks share one JVM and one Python. Here a master and a
worker (tests/integration/spark/cluster.py: the installed PySpark, 127.0.0.1 only, free
ports, everything under tmp_path) give the job executors of their own, and
the job goes through the web app's launcher (``launch_rollup``): spark-submit
in client mode, the project shipped with ``--py-files``, the executors' Python
set, absolute paths, REDIS_URL from the app's config. The checks are the
local rollup test's (Parquet and summary.json contents, the ``spark.job.*``
notifications in Redis under one correlation id) plus what only a cluster
shows: the executors' Python and where they imported the project from.
Every process the cluster or the job started is stopped, and checked gone.
"""
import json
import os
import signal
import subprocess
import sys
import zipfile

import pytest

from app.spark import launcher
from tests.integration.spark.archive import generate
from tests.integration.spark.cluster import StandaloneCluster, group_members, loopback_env
from tests.integration.spark.test_notifier import job_notifications
from tests.support import wait_until
from workers.spark.jobs import rollup

COUNT = 20_000
JOB_TIMEOUT = 300  # seconds a submitted job may take before it is killed (and the test fails)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One master and one worker (2 cores) for this module; stopped, and checked gone."""
    cluster = StandaloneCluster(tmp_path_factory.mktemp("spark-cluster"))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
        assert not cluster.leftovers(), f"processes of the cluster still alive: {cluster.leftovers()}"


@pytest.fixture
def driver_env(tmp_path, monkeypatch, cluster):
    """What the launching process's environment holds: loopback only, a Spark
    configuration folder of the test's (no driver UI, small executors), the master."""
    env = loopback_env(tmp_path / "driver")
    (tmp_path / "driver" / "conf" / "spark-defaults.conf").write_text(
        "spark.ui.enabled false\n"
        "spark.ui.showConsoleProgress false\n"
        "spark.executor.memory 1g\n"
        "spark.sql.shuffle.partitions 4\n")
    for name in ("SPARK_HOME", "SPARK_CONF_DIR", "SPARK_LOCAL_IP", "SPARK_LOCAL_HOSTNAME",
                 "SPARK_PUBLIC_DNS"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.setenv("SPARK_MASTER", cluster.url)
    return env


def stop_group(process):
    """Kill a job's whole process group (spark-submit's JVM and the Python driver it
    started) if anything of it is still running; bounded."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        pass


def test_the_launch_command_on_local_and_cluster_masters(tmp_path, monkeypatch):
    """Local: ``python -m`` as before. Cluster: spark-submit in client mode, the
    project zipped for --py-files, the driver's Python set; absolute paths both ways."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    local = launcher.rollup_command("archive", "out", correlation_id="c")
    assert local == [sys.executable, "-m", "workers.spark.jobs.rollup", "--archive",
                     str(tmp_path / "archive"), "--out", str(tmp_path / "out"),
                     "--correlation-id", "c"]
    monkeypatch.setenv("SPARK_MASTER", "spark://spark-master.internal:7077")
    command = launcher.rollup_command("archive", "out", scratch=tmp_path / "scratch")
    assert command[0] == str(launcher.spark_submit()) and os.access(command[0], os.X_OK)
    options = dict(zip(command[1:9:2], command[2:9:2], strict=True))
    assert options == {"--master": "spark://spark-master.internal:7077",
                       "--deploy-mode": "client", "--name": "herald-rollup",
                       "--py-files": str(tmp_path / "scratch" / launcher.PROJECT_ZIP)}
    assert f"spark.pyspark.driver.python={sys.executable}" in command
    script = command.index(str(launcher.ROLLUP_SCRIPT))
    assert command[script + 1:] == ["--archive", str(tmp_path / "archive"), "--out",
                                    str(tmp_path / "out"), "--master",
                                    "spark://spark-master.internal:7077"]
    with zipfile.ZipFile(options["--py-files"]) as shipped:
        names = set(shipped.namelist())
    assert {"app/__init__.py", "app/stream/publish.py", "workers/spark/notifier.py",
            "workers/spark/jobs/rollup.py"} <= names
    assert all(name.endswith(".py") for name in names)


def test_the_launcher_runs_the_rollup_on_a_standalone_cluster(cluster, driver_env, spark,
                                                               redis_server, herald_redis,
                                                               tmp_path):
    archive = generate(tmp_path / "archive", COUNT)
    config = {"ARCHIVE_DIR": str(archive), "ROLLUP_DIR": str(tmp_path / "rollup"),
              "SPARK_LOG_DIR": str(tmp_path / "logs"), "REDIS_URL": redis_server.url}
    runs = launcher.Runs()
    correlation_id = launcher.launch_rollup(config, runs, "ann", herald_redis)
    process = runs.processes[correlation_id]
    log = tmp_path / "logs" / f"{correlation_id}.log"
    try:
        try:
            process.wait(JOB_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the job ran past {JOB_TIMEOUT} s:\n{log.read_text()[-4000:]}")
    finally:
        stop_group(process)
    output = log.read_text()
    assert process.returncode == 0, output[-4000:]
    assert not group_members(process.pid)  # spark-submit's JVM, the Python driver: gone

    assert (tmp_path / "logs" / launcher.PROJECT_ZIP).exists()  # --py-files, in SPARK_LOG_DIR
    assert f"{COUNT:,} notifications read" in output
    counts = spark.read.parquet(str(tmp_path / "rollup" / "counts"))
    assert counts.agg({"count": "sum"}).collect()[0][0] == COUNT
    summary = json.loads((tmp_path / "rollup" / "summary.json").read_text())
    assert summary["rows_read"] == COUNT and len(summary["days"]) == 5
    assert sum(t["total"] for t in summary["topics"]) == COUNT
    assert summary["correlation_id"] == correlation_id

    sent = job_notifications(herald_redis, correlation_id)
    topics = [n["topic"] for n in sent]
    assert topics[0] == "spark.job.started" and topics[-1] == "spark.job.succeeded"
    assert set(topics[1:-1]) <= {"spark.job.progress"}
    assert {n["correlation_id"] for n in sent} == {correlation_id}
    assert {n.get("user") for n in sent} == {"ann"}
    assert sent[0]["data"]["master"] == cluster.url
    assert sent[0]["data"]["application_id"].startswith("app-")  # the master's id, not local-…
    percents = [n["data"]["percent"] for n in sent if n["topic"] == "spark.job.progress"]
    assert percents == sorted(percents) and percents[-1] == 100
    done = sent[-1]["data"]
    assert done["rows_written"] > 0 and done["output_path"] == str(tmp_path / "rollup")
    assert done["cluster_check_s"] > 0
    # The executors ran this virtualenv's Python and imported the project from the
    # zip the launcher shipped (not from this checkout: their PYTHONPATH lacks it).
    executors = done["executors"]
    assert executors and all(e["python"] == sys.executable for e in executors)
    assert all(f"{launcher.PROJECT_ZIP}/app/spark/masters.py" in e["project"]
               for e in executors), executors
    wait_until(lambda: launcher.running_rollup(herald_redis) is None, timeout=10,
               message="the launcher's watcher to free the lock")

    application = sent[0]["data"]["application_id"]
    wait_until(lambda: application in {a["id"] for a in
                                       (cluster.state() or {}).get("completedapps", ())},
               timeout=30, message="the master to list the run as a completed application")


class _ClusterContext:
    """The local SparkContext, claiming a cluster master: check_cluster then runs
    its probe (on local[2]'s Python workers) as it would on executors."""
    master = "spark://elsewhere.internal:7077"

    def __init__(self, real):
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)


class _OnACluster:
    def __init__(self, spark):
        self.sparkContext = _ClusterContext(spark.sparkContext)


def canned(*reports):
    """A stand-in for rollup._probe: every task reports ``reports`` (other nodes')."""
    def probe(_archive, _samples, _marker):
        return lambda _: iter(reports)
    return probe


GOOD = {"host": "node-a", "python": "/srv/herald/.venv/bin/python", "version": "3.11.7",
        "project": "/x/herald-project.zip/app/spark/masters.py", "archive": True,
        "archive_readable": True, "output": True, "output_writable": True}


def test_the_executor_check_names_each_problem(spark, tmp_path, monkeypatch, capsys):
    """check_cluster's verdicts, from reports of nodes that cannot all exist on one
    machine (a node without the shared folders, one that may not read or write)."""
    archive, out = generate(tmp_path / "archive", 10, days=2), tmp_path / "out"
    on_a_cluster = _OnACluster(spark)
    found = rollup.check_cluster(on_a_cluster, archive, out)  # the real probe: all is well
    assert [report["version"] for report in found] == ["{}.{}.{}".format(*sys.version_info[:3])]
    assert not list(out.glob(".herald-cluster-check-*"))  # the driver's marker is removed

    monkeypatch.setattr(rollup, "_probe", canned(GOOD, dict(GOOD, host="node-b", archive=False,
                                                            output=False)))
    with pytest.raises(rollup.ClusterError) as caught:
        rollup.check_cluster(on_a_cluster, archive, out)
    assert str(caught.value) == (
        f"node-b does not see the archive folder {archive} (it must be on storage every node "
        f"mounts at that path); node-b does not see the output folder {out} as the driver does "
        "(it must be shared storage every node mounts at that path)")

    monkeypatch.setattr(rollup, "_probe", canned(dict(GOOD, archive_readable=False,
                                                      output_writable=False)))
    with pytest.raises(rollup.ClusterError, match="node-a may not read the archive's files.*"
                                                  "node-a may not write into the output folder"):
        rollup.check_cluster(on_a_cluster, archive, out)

    monkeypatch.setattr(rollup, "_probe", canned(dict(GOOD, project=None)))
    assert rollup.check_cluster(on_a_cluster, archive, out)[0]["project"] is None
    assert "executors on node-a cannot import the project" in capsys.readouterr().err
    # An archive the driver does not see either is read_archive's to report.
    assert rollup.check_cluster(on_a_cluster, tmp_path / "nowhere", out) is None


def test_executors_without_python_fail_early_and_clearly(cluster, driver_env, redis_server,
                                                         herald_redis, tmp_path):
    archive = generate(tmp_path / "archive", 500, days=1)
    command = launcher.rollup_command(
        archive, tmp_path / "out", correlation_id="no-python", master=cluster.url,
        scratch=tmp_path / "scratch", conf={"spark.pyspark.python": "/nonexistent/bin/python3",
                                            "spark.task.maxFailures": "1"})
    # Under spark-submit the Python driver's stderr arrives on spark-submit's stdout.
    process = subprocess.Popen(command, env=dict(os.environ, REDIS_URL=redis_server.url),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=JOB_TIMEOUT)
    finally:
        stop_group(process)
    assert process.returncode == 2, output[-4000:]
    assert ("rollup: executors could not run the job's Python (/nonexistent/bin/python3): "
            'Cannot run program "/nonexistent/bin/python3"') in output
    failed = job_notifications(herald_redis, "no-python")[-1]
    assert failed["topic"] == "spark.job.failed"
    assert failed["data"]["error_type"] == "ClusterError"
    assert "/nonexistent/bin/python3" in failed["data"]["error_message"]
    assert not (tmp_path / "out" / "summary.json").exists()
    assert not group_members(process.pid)
