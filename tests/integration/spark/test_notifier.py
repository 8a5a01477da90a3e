"""The Spark job notifier on real Spark (local[2]) and a real Redis."""
import orjson
import pytest

from app.stream.keys import STREAM
from tests.support import Bridge, free_port
from workers.spark.notifier import SparkJobNotifier, notify_spark_job


def job_notifications(redis, correlation_id=None):
    found = []
    for _entry_id, fields in redis.xrange(STREAM):
        envelope = orjson.loads(fields[b"envelope"])
        if envelope["topic"].startswith("spark.job.") and (
                correlation_id is None or envelope.get("correlation_id") == correlation_id):
            found.append(envelope)
    return found


def busy(spark):
    """A Spark job with several stages and tasks."""
    return (spark.range(0, 400_000, numPartitions=8).selectExpr("id % 97 as k", "id")
            .groupBy("k").count().agg({"count": "sum"}).collect()[0][0])


def test_a_successful_run(spark, herald_redis):
    with SparkJobNotifier("sums", spark, correlation_id="run-ok", interval=0.05) as run:
        assert busy(spark) == 400_000
        run.result(rows_written=97, output_path="/tmp/out")
    sent = job_notifications(herald_redis)
    assert [n["topic"] for n in sent][0] == "spark.job.started"
    assert [n["topic"] for n in sent][-1] == "spark.job.succeeded"
    assert {n["correlation_id"] for n in sent} == {"run-ok"}
    percents = [n["data"]["percent"] for n in sent if n["topic"] == "spark.job.progress"]
    assert percents[-1] == 100 and percents == sorted(percents)
    done = sent[-1]
    assert done["severity"] == "success"
    assert done["data"]["rows_written"] == 97 and done["data"]["output_path"] == "/tmp/out"
    assert done["data"]["duration_s"] > 0 and done["body"] == "97 rows written to /tmp/out"


def test_a_failing_run_publishes_failed_and_reraises(spark, herald_redis):
    with pytest.raises(ValueError, match="boom"):
        with SparkJobNotifier("breaks", spark, correlation_id="run-bad", interval=0.05):
            busy(spark)
            raise ValueError("boom")
    sent = job_notifications(herald_redis, "run-bad")
    assert [n["topic"] for n in sent if n["topic"] != "spark.job.progress"] == [
        "spark.job.started", "spark.job.failed"]
    failed = sent[-1]
    assert failed["severity"] == "error"
    assert failed["data"]["error_type"] == "ValueError"
    assert failed["data"]["error_message"] == "boom"


def test_a_spark_error_is_reported_too(spark, herald_redis, tmp_path):
    with pytest.raises(Exception) as caught:
        with SparkJobNotifier("reads", spark, correlation_id="run-missing", interval=0.05):
            spark.read.parquet(str(tmp_path / "nothing-here")).count()
    failed = job_notifications(herald_redis, "run-missing")[-1]
    assert failed["topic"] == "spark.job.failed"
    assert failed["data"]["error_type"] == type(caught.value).__name__


def test_publishing_failures_never_break_the_job(spark, monkeypatch):
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    with SparkJobNotifier("offline", spark, interval=0.05, flush_timeout=10) as run:
        assert busy(spark) == 400_000
    assert run.sink.published == 0 and run.sink.failed >= 3


def test_private_to_the_user_who_launched_it(spark, herald_redis):
    with SparkJobNotifier("mine", spark, user="ann", correlation_id="run-ann", interval=0.05):
        busy(spark)
    assert {n.get("user") for n in job_notifications(herald_redis, "run-ann")} == {"ann"}


def test_decorator_reports_the_returned_result(spark, herald_redis):
    @notify_spark_job("decorated", correlation_id="run-deco", interval=0.05)
    def job(session):
        busy(session)
        return {"rows_written": 3, "output_path": "somewhere"}

    assert job(spark) == {"rows_written": 3, "output_path": "somewhere"}
    done = job_notifications(herald_redis, "run-deco")[-1]
    assert done["topic"] == "spark.job.succeeded" and done["data"]["rows_written"] == 3


def test_through_the_zeromq_bridge(spark, redis_server, herald_redis, tmp_path):
    bridge = Bridge(redis_server.url, tmp_path)
    bridge.start()
    try:
        with SparkJobNotifier("bridged", spark, correlation_id="run-zmq", interval=0.05,
                              via="zmq", zmq_endpoint=bridge.router):
            busy(spark)
    finally:
        bridge.stop()
    sent = job_notifications(herald_redis, "run-zmq")
    assert sent[0]["topic"] == "spark.job.started" and sent[-1]["topic"] == "spark.job.succeeded"
    assert all(n.get("origin") for n in sent)  # the bridge peer's origin
