"""The Spark job notifier: any PySpark job becomes a first-class Herald publisher.

    with SparkJobNotifier("rollup", spark, user="ada") as run:
        rows = write_output(...)
        run.result(rows_written=rows, output_path=out)

    @notify_spark_job("nightly-export")
    def main(spark, args):
        ...
        return {"rows_written": n, "output_path": path}

One run publishes, all under one ``correlation_id`` (also the Spark job group):

- ``spark.job.started`` when it begins;
- ``spark.job.progress`` every ``interval`` seconds while the percent moves
  (tasks completed over total, never going down; see progress.py), and a
  last one at 100 when the run succeeds;
- ``spark.job.succeeded`` (severity success) with the duration, rows written
  and output path; or ``spark.job.failed`` (severity error) titled with what
  went wrong in a few words ("Spark job nightly failed: Input path does not
  exist: …", never just "Py4JJavaError"), the error's telling line as its body
  and its type in the data (errors.py: never a Java stack trace), while the
  job's own exception still propagates.

``user`` makes them private to whoever launched the run. Publishing goes
through Redis, or through the ZeroMQ bridge with ``via="zmq"`` (or
``HERALD_NOTIFY_VIA=zmq``; ``HERALD_ZMQ_ROUTER`` names the endpoint). It can
never break or stall the job (see sink.py); at the end it waits at most
``flush_timeout`` seconds for the last notifications to go out.
"""
import functools
import logging
import re
import threading
import time
import uuid

from app.settings import get
from workers.spark.errors import reason
from workers.spark.progress import Progress
from workers.spark.sink import Sink

log = logging.getLogger("herald.spark")

TITLE_LIMIT = 120  # characters: an inbox row's title; the body holds the whole telling line
_TYPE_PREFIX = re.compile(r"^\w+(?:Error|Exception): ")


def failure_title(name, told):
    """A failed run's title: ``told`` (errors.reason) without its exception type, which the
    body and the data keep, bounded to ``TITLE_LIMIT`` characters."""
    title = f"Spark job {name} failed: {_TYPE_PREFIX.sub('', told)}"
    return title if len(title) <= TITLE_LIMIT else title[:TITLE_LIMIT - 1] + "…"


def _active_spark():
    from pyspark.sql import SparkSession
    spark = SparkSession.getActiveSession()
    if spark is None:
        raise RuntimeError("SparkJobNotifier needs a SparkSession: pass one or create it first")
    return spark


class SparkJobNotifier:
    """A context manager that reports one Spark run to Herald."""

    def __init__(self, name, spark=None, user=None, correlation_id=None, interval=2.0,
                 via=None, zmq_endpoint=None, flush_timeout=5.0):
        self.name = name
        self.spark = spark
        self.user = user
        self.correlation_id = correlation_id or f"spark-{name}-{uuid.uuid4().hex[:12]}"
        self.interval = interval
        self.via = via or get("HERALD_NOTIFY_VIA")
        self.zmq_endpoint = zmq_endpoint or get("HERALD_ZMQ_ROUTER") or None
        self.flush_timeout = flush_timeout
        self.details = {}
        self.sink = None
        self._stop = threading.Event()
        self._watcher = None

    def result(self, **details):
        """What to report on success, e.g. rows_written=…, output_path=…."""
        self.details.update(details)

    def _send(self, stage, title, severity="info", body=None, **data):
        fields = {"severity": severity, "correlation_id": self.correlation_id,
                  "data": dict(data, job=self.name, correlation_id=self.correlation_id)}
        if body:
            fields["body"] = body[:4000]
        if self.user:
            fields["user"] = self.user
        self.sink.send(f"spark.job.{stage}", title[:200], **fields)

    def __enter__(self):
        self.spark = self.spark or _active_spark()
        context = self.spark.sparkContext
        context.setJobGroup(self.correlation_id, f"herald: {self.name}")
        self.sink = Sink(self.via, self.zmq_endpoint)
        self.started = time.monotonic()
        self._send("started", f"Spark job {self.name} started", percent=0,
                   master=context.master, application_id=context.applicationId)
        self._watcher = threading.Thread(target=self._watch, args=(Progress(context, self.correlation_id),),
                                         name="herald-progress", daemon=True)
        self._watcher.start()
        return self

    def _watch(self, progress):
        last = None
        while not self._stop.wait(self.interval):
            try:
                state = progress.read()
            except Exception as exc:  # the tracker going away must not matter to the job
                log.warning("herald: could not read Spark progress: %s", exc)
                continue
            if state["percent"] != last:
                last = state["percent"]
                self._send("progress", f"Spark job {self.name}: {last}%", **state)

    def __exit__(self, kind, error, traceback):
        self._stop.set()
        self._watcher.join(self.interval + 1)
        duration = round(time.monotonic() - self.started, 3)
        if error is None:
            self._send("progress", f"Spark job {self.name}: 100%", percent=100)
            rows, output = self.details.get("rows_written"), self.details.get("output_path")
            body = f"{rows:,} rows written to {output}" if rows is not None and output else None
            self._send("succeeded", f"Spark job {self.name} succeeded in {duration:.1f} s",
                       severity="success", body=body, duration_s=duration, percent=100,
                       **self.details)
        else:
            # The telling line of the error, not a Java stack trace (errors.py).
            told = reason(error)
            self._send("failed", failure_title(self.name, told),
                       severity="error", body=told, duration_s=duration,
                       error_type=kind.__name__, error_message=told)
        self.sink.close(self.flush_timeout)
        try:
            self.spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        except Exception:  # the context may already be stopped; nothing to clear then
            pass
        return False  # the job's own exception, if any, goes on


def notify_spark_job(name=None, **options):
    """Decorator form: the wrapped function's SparkSession argument (or the active
    one) is watched; a dict it returns is reported as the result."""
    def wrap(function):
        @functools.wraps(function)
        def run(*args, **kwargs):
            from pyspark.sql import SparkSession
            spark = next((a for a in args if isinstance(a, SparkSession)), None)
            with SparkJobNotifier(name or function.__name__, spark, **options) as job:
                outcome = function(*args, **kwargs)
                if isinstance(outcome, dict):
                    job.result(**outcome)
                return outcome
        return run
    return wrap
