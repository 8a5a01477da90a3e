"""The rollup job end to end: archive in, Parquet and summary out, progress live."""
import json
import os
import subprocess
import sys
import time

import pytest

from app.users import accounts, subscriptions
from tests.integration.spark.archive import generate
from tests.integration.spark.test_notifier import job_notifications
from tests.support import ROOT, Listener, wait_until
from workers.spark.jobs import rollup


def run_args(archive, out, *extra):
    return rollup.parse_args(["--archive", str(archive), "--out", str(out), *extra])


def test_full_run_over_100000_notifications_seen_live(spark, live_server, herald_redis, tmp_path):
    archive = generate(tmp_path / "archive", 100_000)
    accounts.create_user(herald_redis, "ann", "ann-password")
    subscriptions.add(herald_redis, "ann", ["spark.job"], limit=10)
    listener = Listener(live_server, live_server.token("ann", "ann-password"))
    try:
        started = time.monotonic()
        outcome = rollup.main(spark, run_args(archive, tmp_path / "rollup", "--correlation-id",
                                              "rollup-100k", "--progress-interval", "0.2"))
        elapsed = time.monotonic() - started
        wait_until(lambda: "spark.job.succeeded" in listener.topics(), timeout=15,
                   message="the succeeded notification")
        received = list(listener.received)
    finally:
        listener.close()
    print(f"rollup over 100,000 notifications: {elapsed:.1f} s")
    assert outcome["rows_read"] == 100_000
    assert {n["correlation_id"] for n in received} == {"rollup-100k"}
    topics = [n["topic"] for n in received]
    assert topics[0] == "spark.job.started" and topics[-1] == "spark.job.succeeded"
    assert set(topics[1:-1]) == {"spark.job.progress"}
    percents = [n["data"]["percent"] for n in received if n["topic"] == "spark.job.progress"]
    assert percents == sorted(percents) and percents[-1] == 100 and len(percents) >= 2
    counts = spark.read.parquet(str(tmp_path / "rollup" / "counts"))
    assert counts.agg({"count": "sum"}).collect()[0][0] == 100_000
    summary = json.loads((tmp_path / "rollup" / "summary.json").read_text())
    assert summary["rows_read"] == 100_000 and len(summary["days"]) == 5
    assert sum(t["total"] for t in summary["topics"]) == 100_000


def test_missing_archive_fails_clearly(spark, herald_redis, tmp_path):
    with pytest.raises(rollup.ArchiveError, match="archive not found"):
        rollup.main(spark, run_args(tmp_path / "nope", tmp_path / "out", "--correlation-id", "gone"))
    failed = job_notifications(herald_redis, "gone")[-1]
    assert failed["topic"] == "spark.job.failed"
    assert failed["data"]["error_type"] == "ArchiveError"
    (tmp_path / "empty").mkdir()
    with pytest.raises(rollup.ArchiveError, match="archive is empty"):
        rollup.main(spark, run_args(tmp_path / "empty", tmp_path / "out"))


def spark_env(redis_server):
    return dict(os.environ, REDIS_URL=redis_server.url, SPARK_LOCAL_IP="127.0.0.1",
                PYSPARK_PYTHON=sys.executable)


def test_runs_unchanged_under_spark_submit(redis_server, herald_redis, tmp_path):
    archive = generate(tmp_path / "archive", 2_000, days=2)
    submit = ROOT / ".venv" / "bin" / "spark-submit"
    done = subprocess.run(
        [str(submit), "--master", "local[2]", "--conf", "spark.ui.enabled=false",
         "workers/spark/jobs/rollup.py", "--archive", str(archive), "--out",
         str(tmp_path / "out"), "--correlation-id", "submitted"],
        cwd=ROOT, env=spark_env(redis_server), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2,000 notifications read" in done.stdout
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["rows_read"] == 2_000
    sent = job_notifications(herald_redis, "submitted")
    assert sent[-1]["topic"] == "spark.job.succeeded"
    assert sent[0]["data"]["master"] == "local[2]"  # spark-submit's --master, not a default


def test_python_m_with_a_missing_archive_exits_2(redis_server, herald_redis, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "workers.spark.jobs.rollup", "--master", "local[1]",
         "--archive", str(tmp_path / "missing"), "--out", str(tmp_path / "out"),
         "--correlation-id", "cli-missing"],
        cwd=ROOT, env=spark_env(redis_server), capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert f"rollup: archive not found: {tmp_path / 'missing'} is not a folder" in done.stderr
    assert job_notifications(herald_redis, "cli-missing")[-1]["topic"] == "spark.job.failed"
