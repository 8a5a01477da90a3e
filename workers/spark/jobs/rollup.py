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
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file (spark-submit): make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from pyspark.sql import DataFrame, SparkSession, functions as F  # noqa: E402
from pyspark.sql.types import StringType, StructField, StructType  # noqa: E402

from workers.spark.notifier import SparkJobNotifier  # noqa: E402

ARCHIVE_SCHEMA = StructType([StructField(name, StringType()) for name in
                             ("id", "topic", "severity", "ts", "user")])
SUMMARY_DAYS = 31
SUMMARY_TOPICS = 12


class ArchiveError(RuntimeError):
    """The archive is missing, empty or unreadable."""


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
    files = sorted(str(path) for path in folder.glob("date=*/*.jsonl"))
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
    counts.write.mode("overwrite").parquet(str(out / "counts"))
    topics.write.mode("overwrite").parquet(str(out / "topics"))
    summary = summarise(counts, topics)
    summary["rows_read"] = rows_read
    written = spark.read.parquet(str(out / "counts")).count() + len(summary["topics"])
    notifications.unpersist()
    out.mkdir(parents=True, exist_ok=True)
    return {"rows_read": rows_read, "rows_written": written, "output_path": str(out)}, summary


def main(spark, args):
    """The rollup, reported live to Herald; returns {"rows_read", "rows_written", "output_path"}."""
    with SparkJobNotifier("rollup", spark, user=args.user, correlation_id=args.correlation_id,
                          interval=args.progress_interval) as run:
        outcome, summary = rollup(spark, args.archive, args.out)
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
    """A SparkSession on ``master`` (or SPARK_MASTER, or spark-submit's, or local[*])."""
    from pyspark import SparkConf
    builder = SparkSession.builder.appName("herald-rollup")
    master = master or os.environ.get("SPARK_MASTER")
    if master:
        builder = builder.master(master)
    elif not SparkConf().contains("spark.master"):
        builder = builder.master("local[*]")
    return builder.getOrCreate()


def cli(argv=None):
    args = parse_args(argv)
    spark = session(args.master)
    try:
        outcome = main(spark, args)
    except ArchiveError as exc:
        print(f"rollup: {exc}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(f"rollup: {outcome['rows_read']:,} notifications read, "
          f"{outcome['rows_written']:,} rows written to {outcome['output_path']}")
    return 0


if __name__ == "__main__":
    sys.exit(cli())
