"""Rollup: notification volume per day, topic and severity, from the archive.

Runs unchanged either way (the master from ``--master``, else
``SPARK_MASTER``, else spark-submit's, else ``local[*]``):

    spark-submit workers/spark/jobs/rollup.py --archive var/archive --out var/rollup
    python -m workers.spark.jobs.rollup --archive var/archive --out var/rollup

Reads the JSON Lines archive (workers/archiver.py) and writes, under --out:
``counts/`` (Parquet: day, topic, severity, count), ``topics/`` (Parquet:
topic, total, first_seen, last_seen) and ``summary.json`` (the same, small,
for the Jobs page: per-topic volume of the last 31 days, top 12 topics).
The run is wrapped in the Herald notifier, so its progress and outcome show
live in the browser. A missing or empty archive is an error: the run
publishes ``spark.job.failed`` and exits with status 2 and a clear message.

On a cluster master (``spark://``, ``yarn``, ``k8s://``; see docs/spark.md)
the executors run elsewhere, so before reading anything the job checks,
with one small task per core, that they can run Python, that they see the
archive and the output folder at the driver's paths (a file the driver has
just written there must be visible to them: shared storage, not a copy),
and whether they can import the project (``--py-files``). A Spark error
for any of these would come late and obscure; this fails in seconds,
naming the host and the path, with status 2. Paths are given to Spark as
``file://`` URIs, so a cluster whose default filesystem is HDFS (YARN)
still reads and writes the shared folder, not HDFS.
"""
import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):  # run as a file (spark-submit): make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType  # noqa: E402

from app.settings import export_default, get  # noqa: E402
from app.spark.masters import is_local  # noqa: E402
from workers.spark.errors import reason  # noqa: E402
from workers.spark.notifier import SparkJobNotifier  # noqa: E402

ARCHIVE_SCHEMA = StructType([StructField(name, StringType()) for name in
                             ("id", "topic", "severity", "ts", "user")])
SUMMARY_DAYS = 31
SUMMARY_TOPICS = 12


class ArchiveError(RuntimeError):
    """The archive is missing, empty or unreadable."""


class ClusterError(RuntimeError):
    """The cluster's executors cannot run this job: no Python, or they do not see
    the archive or the output folder at the driver's paths."""


def local_uri(path):
    """``path`` as an absolute ``file://`` URI for Spark.

    Without a scheme, Spark resolves a path on the cluster's default
    filesystem (HDFS on YARN), not on the shared folder the archiver writes.
    Not percent-encoded: Hadoop parses the string by parts, and would take
    ``date%3D…`` literally.
    """
    return "file://" + os.path.abspath(path)


def transform(notifications: DataFrame):
    """(counts, topics) from archived notifications; the pure part, tested on its own.

    counts: one row per (day, topic, severity) with its count;
    topics: one row per topic with its total and first/last ``ts`` seen.
    Rows without a topic or ts (unreadable lines) are left out.
    """
    rows = (notifications.where(F.col("topic").isNotNull() & F.col("ts").isNotNull())
            .withColumn("day", F.substring("ts", 1, 10))
            .withColumn("severity", F.coalesce(F.col("severity"), F.lit("info"))))
    counts = rows.groupBy("day", "topic", "severity").agg(F.count(F.lit(1)).alias("count"))
    topics = rows.groupBy("topic").agg(F.count(F.lit(1)).alias("total"),
                                       F.min("ts").alias("first_seen"),
                                       F.max("ts").alias("last_seen"))
    return counts, topics


def read_archive(spark, archive):
    """The archive's notifications; raises ArchiveError when there are none to read."""
    folder = Path(archive)
    if not folder.is_dir():
        raise ArchiveError(f"archive not found: {folder} is not a folder")
    files = sorted(local_uri(path) for path in folder.glob("date=*/*.jsonl"))
    if not files:
        raise ArchiveError(f"archive is empty: no date=*/*.jsonl files under {folder}")
    return spark.read.schema(ARCHIVE_SCHEMA).json(files)


def summarise(counts, topics):
    """A small, JSON-ready picture of the rollup for the Jobs page."""
    topic_rows = [row.asDict() for row in topics.orderBy(F.desc("total"), "topic").collect()]
    top = [row["topic"] for row in topic_rows[:SUMMARY_TOPICS]]
    days = sorted({row["day"] for row in counts.select("day").distinct().collect()})[-SUMMARY_DAYS:]
    volume = (counts.where(F.col("day").isin(days) & F.col("topic").isin(top))
              .groupBy("day", "topic").agg(F.sum("count").alias("count"))
              .orderBy("day", "topic").collect())
    return {"generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "days": days, "topics": topic_rows,
            "volume": [row.asDict() for row in volume]}


def rollup(spark, archive, out):
    """Read, transform, write; returns {"rows_read", "rows_written", "output_path"}."""
    out = Path(out)
    notifications = read_archive(spark, archive).cache()
    rows_read = notifications.count()
    if rows_read == 0:
        raise ArchiveError(f"archive is unreadable: no notifications in {archive}")
    counts, topics = transform(notifications)
    counts.write.mode("overwrite").parquet(local_uri(out / "counts"))
    topics.write.mode("overwrite").parquet(local_uri(out / "topics"))
    summary = summarise(counts, topics)
    summary["rows_read"] = rows_read
    written = spark.read.parquet(local_uri(out / "counts")).count() + len(summary["topics"])
    notifications.unpersist()
    out.mkdir(parents=True, exist_ok=True)
    return {"rows_read": rows_read, "rows_written": written, "output_path": str(out)}, summary


def _probe(archive, samples, marker):
    """The task check_cluster runs on executors: what this executor's Python sees.

    A closure, so Spark ships it by value: it runs even where the project
    cannot be imported, and then says so.
    """
    def probe(_):
        import os
        import socket
        import sys
        try:
            import app.spark.masters as shipped
            project = shipped.__file__
        except ImportError:
            project = None
        output = os.path.dirname(marker)
        yield {"host": socket.gethostname(), "python": sys.executable,
               "version": "{}.{}.{}".format(*sys.version_info[:3]), "project": project,
               "archive": os.path.isdir(archive),
               "archive_readable": all(os.access(path, os.R_OK) for path in samples),
               "output": os.path.isfile(marker),
               "output_writable": os.access(output, os.W_OK | os.X_OK)}
    return probe


def check_cluster(spark, archive, out):
    """On a cluster master, check that executors can run this job; None on a local one.

    Runs one task per core (``defaultParallelism``), so every executor that
    gets one reports: its host, Python (path and version), where it imported
    the project from (None: not importable; a warning only, the rollup's own
    work runs in the executors' JVMs), whether it sees the archive folder and
    can read its first and last files (they are readable by their owner and
    group only), whether it sees a file the driver has just written into
    ``out`` (shared storage, not each node's own folder of that name), and
    whether it may write there. Raises ClusterError when an executor cannot
    run Python or fails one of those; returns the distinct reports otherwise.
    An archive the driver itself does not see is left to read_archive's
    clearer ArchiveError (nothing is checked then).
    """
    context = spark.sparkContext
    if is_local(context.master):
        return None
    archive, out = os.path.abspath(archive), Path(os.path.abspath(out))
    files = sorted(Path(archive).glob("date=*/*.jsonl"))
    if not files:
        return None
    samples = [str(path) for path in files[:1] + files[-1:]]
    out.mkdir(parents=True, exist_ok=True)
    marker = out / f".herald-cluster-check-{uuid.uuid4().hex}"
    marker.write_text("written by the rollup's driver; executors must see it\n")
    tasks = max(1, context.defaultParallelism)
    try:
        seen = (context.parallelize(range(tasks), tasks)
                .mapPartitions(_probe(archive, samples, str(marker))).collect())
    except Exception as exc:
        python = context.getConf().get("spark.pyspark.python") or context.pythonExec
        raise ClusterError(f"executors could not run the job's Python ({python}): "
                           f"{reason(exc)}") from None
    finally:
        marker.unlink(missing_ok=True)
    reports = list({(r["host"], r["python"]): r for r in seen}.values())
    problems = []
    for r in reports:
        if not r["archive"]:
            problems.append(f"{r['host']} does not see the archive folder {archive} "
                            "(it must be on storage every node mounts at that path)")
        elif not r["archive_readable"]:
            problems.append(f"{r['host']} may not read the archive's files under {archive} "
                            "(run the executors as a user of the archive's group)")
    for r in reports:
        if not r["output"]:
            problems.append(f"{r['host']} does not see the output folder {out} as the driver "
                            "does (it must be shared storage every node mounts at that path)")
        elif not r["output_writable"]:
            problems.append(f"{r['host']} may not write into the output folder {out}")
    if problems:
        raise ClusterError("; ".join(problems))
    for report in reports:
        if report["project"] is None:
            print(f"rollup: warning: executors on {report['host']} cannot import the project "
                  "(ship it with --py-files herald-project.zip); the rollup does not need it",
                  file=sys.stderr)
    return [{key: r[key] for key in ("host", "python", "version", "project")} for r in reports]


def main(spark, args):
    """The rollup, reported live to Herald; returns {"rows_read", "rows_written", "output_path"}
    (and, on a cluster master, "executors", what check_cluster found, and
    "cluster_check_s", the seconds that check took)."""
    with SparkJobNotifier("rollup", spark, user=args.user, correlation_id=args.correlation_id,
                          interval=args.progress_interval) as run:
        checked = time.monotonic()
        executors = check_cluster(spark, args.archive, args.out)
        checked = round(time.monotonic() - checked, 3)
        outcome, summary = rollup(spark, args.archive, args.out)
        if executors is not None:  # a cluster master
            outcome.update(executors=executors, cluster_check_s=checked)
        summary["correlation_id"] = run.correlation_id
        (Path(args.out) / "summary.json").write_text(json.dumps(summary, indent=1))
        run.result(**outcome)
    return outcome


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="rollup", description=__doc__.splitlines()[0])
    parser.add_argument("--archive", default="var/archive", help="the archive folder")
    parser.add_argument("--out", default="var/rollup", help="where to write the rollup")
    parser.add_argument("--master", help="Spark master URL (default: SPARK_MASTER or local[*])")
    parser.add_argument("--user", help="make the job's notifications private to this user")
    parser.add_argument("--correlation-id", help="ties the job's notifications together")
    parser.add_argument("--progress-interval", type=float, default=2.0,
                        help="seconds between progress checks")
    return parser.parse_args(argv)


def session(master):
    """A SparkSession on ``master`` (or SPARK_MASTER, or spark-submit's, or local[*]).

    With neither, no master is set here: Spark takes spark-submit's
    ``--master`` (or spark-defaults.conf's), and ``local[*]`` without one.
    (Asking SparkConf() first does not work: before the JVM is reached it
    sees nothing of spark-submit's settings, so a default set here used to
    replace spark-submit's master with local[*].)

    The executors' Python workers run ``PYSPARK_PYTHON``, which Spark sets
    from ``spark.pyspark.python`` when that is configured; otherwise it is
    made the driver's own interpreter here rather than Spark's default
    ``python3`` (whatever that is on each node, often not the version or the
    virtualenv the driver has, which PySpark refuses or cannot import in).
    """
    export_default("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("herald-rollup")
    master = master or get("SPARK_MASTER")
    if master:
        builder = builder.master(master)
    return builder.getOrCreate()


def cli(argv=None):
    args = parse_args(argv)
    spark = session(args.master)
    try:
        outcome = main(spark, args)
    except (ArchiveError, ClusterError) as exc:
        print(f"rollup: {exc}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(f"rollup: {outcome['rows_read']:,} notifications read, "
          f"{outcome['rows_written']:,} rows written to {outcome['output_path']}")
    return 0


if __name__ == "__main__":
    sys.exit(cli())
