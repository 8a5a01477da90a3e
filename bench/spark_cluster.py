"""The rollup on a Spark standalone cluster beside local[2], launched as Herald launches it.

What does moving the rollup from ``SPARK_MASTER=local[2]`` to a
``spark://`` master cost on the same machine? The same archive (default
100,000 notifications over 5 days) is rolled up ``--runs`` times on each,
alternating, each run a fresh process made by ``app.spark.launcher.rollup_command``
(local: ``python -m workers.spark.jobs.rollup``; cluster: ``spark-submit``
in client mode with ``--py-files`` and the executors' Python), against a
standalone master and one worker of 2 cores (tests/integration/spark/cluster.py: the
installed PySpark, loopback only). Two figures per run:

- wall: from launch to exit (JVM start, executors' start on the cluster,
  the job, stopping);
- job: the run's own duration as its ``spark.job.succeeded`` notification
  reports it (from the SparkSession being up to the end; on the cluster
  it includes the executor check, ``check_cluster``).

Medians are printed and written to bench/results/spark_cluster.json. Both
masters get the same Spark settings (a spark-defaults.conf of the bench's:
no UI, executors of 1 GiB); one worker on the same 2 cores is no faster than
local[2]: this measures the overhead of the cluster path, not a speed-up.

    .venv/bin/python bench/spark_cluster.py [--count 100000] [--runs 3]
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import orjson  # noqa: E402
from common import ROOT, save  # first: it puts the project on sys.path

from app.spark import launcher  # noqa: E402
from app.stream.keys import STREAM  # noqa: E402
from tests.integration.spark.archive import generate  # noqa: E402
from tests.integration.spark.cluster import StandaloneCluster, group_members, loopback_env  # noqa: E402
from tests.support import RedisServer  # noqa: E402

RUN_TIMEOUT = 600  # seconds one run may take before it is killed (and the bench fails)


def succeeded(client, correlation_id):
    """The data of a run's ``spark.job.succeeded`` notification, or None."""
    for _, fields in client.xrange(STREAM):
        envelope = orjson.loads(fields[b"envelope"])
        if (envelope["topic"] == "spark.job.succeeded"
                and envelope.get("correlation_id") == correlation_id):
            return envelope["data"]
    return None


def run_once(command, env, log):
    """Run one job to its end (bounded); its whole process group is gone afterwards."""
    started = time.perf_counter()
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out,  # as launch_rollup
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
        try:
            process.wait(RUN_TIMEOUT)
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(10)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"run failed ({process.returncode}); its log: {log}")
    if group_members(process.pid):
        raise SystemExit(f"processes of the run outlived it: {group_members(process.pid)}")
    return wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="herald-bench-spark-cluster-"))
    archive = generate(folder / "archive", args.count)
    (folder / "redis").mkdir()
    redis_server = RedisServer(folder / "redis")
    redis_server.start()
    cluster = StandaloneCluster(folder / "cluster", cores=2, memory="2g")
    masters = {"local[2]": "local[2]"}
    result = {"count": args.count, "runs": args.runs,
              "wall_s": {"local[2]": [], "standalone": []},
              "job_s": {"local[2]": [], "standalone": []}, "cluster_check_s": []}
    try:
        cluster.start()
        masters["standalone"] = cluster.url
        env = loopback_env(folder / "driver", REDIS_URL=redis_server.url)
        (folder / "driver" / "conf" / "spark-defaults.conf").write_text(
            "spark.ui.enabled false\nspark.ui.showConsoleProgress false\n"
            "spark.executor.memory 1g\n")
        client = redis_server.client()
        for i in range(args.runs):
            for name, master in masters.items():
                run = f"{name.replace('[', '').replace(']', '')}-{i}"  # Spark globs [ ] in paths
                correlation_id = f"bench-{run}"
                command = launcher.rollup_command(
                    archive, folder / "out" / run, correlation_id=correlation_id,
                    master=master, scratch=folder / "scratch")
                wall = run_once(command, env, folder / f"{correlation_id}.log")
                data = succeeded(client, correlation_id)
                if data is None or data["rows_written"] <= 0:
                    raise SystemExit(f"{correlation_id}: no spark.job.succeeded in Redis")
                result["wall_s"][name].append(round(wall, 2))
                result["job_s"][name].append(data["duration_s"])
                check = data.get("cluster_check_s")
                if check is not None:
                    result["cluster_check_s"].append(check)
                print(f"  {name:10} run {i + 1}: wall {wall:6.2f} s, job {data['duration_s']:6.2f} s"
                      + (f" (executor check {check:.2f} s)" if check is not None else ""), flush=True)
        client.close()
    finally:
        cluster.stop()
        redis_server.stop()
        left = cluster.leftovers()
    if left:
        raise SystemExit(f"cluster processes still alive: {left}")
    shutil.rmtree(folder, ignore_errors=True)  # kept when a run failed: its log is there
    print(f"rollup over {args.count:,} notifications, median of {args.runs} runs each:")
    for name in masters:
        wall, job = (statistics.median(result["wall_s"][name]),
                     statistics.median(result["job_s"][name]))
        result[f"{name}_median_wall_s"], result[f"{name}_median_job_s"] = wall, job
        print(f"  {name:10} wall {wall:6.2f} s   job {job:6.2f} s")
    result["cluster_check_median_s"] = statistics.median(result["cluster_check_s"])
    print(f"  (of the standalone job: the executor check {result['cluster_check_median_s']:.2f} s)")
    print(f"written to {save('spark_cluster', result)}")


if __name__ == "__main__":
    main()
