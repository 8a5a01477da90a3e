"""workers/spark/notifier.py: what a failed run's notification says (issue 38), without
starting Spark. Its title (the inbox row) says what went wrong in a few words, never
only the exception's type ("…failed: Py4JJavaError"); the body holds the telling line
(errors.py), and the data its type and line for the Jobs page."""
import threading
import time

from tests.unit.workers.test_spark_errors import JAVA, PYTHON, GatewayGone, Py4JJavaError
from workers.spark.errors import LIMIT
from workers.spark.notifier import TITLE_LIMIT, SparkJobNotifier


class Recorder:
    """Stands in for sink.py's Sink (Redis or ZeroMQ is not under test): keeps what is sent."""

    def __init__(self):
        self.sent = []

    def send(self, topic, title, **fields):
        self.sent.append(dict(fields, topic=topic, title=title))

    def close(self, timeout):
        pass


def failed(error, name="nightly"):
    """The envelope a run that raised ``error`` sends, through the notifier's own __exit__."""
    run = SparkJobNotifier(name, spark=object(), correlation_id="run-1", interval=0.01)
    run.sink, run.started = Recorder(), time.monotonic()
    run._watcher = threading.Thread(target=lambda: None)
    run._watcher.start()
    assert run.__exit__(type(error), error, None) is False  # the job's error goes on
    (envelope,) = run.sink.sent
    assert envelope["topic"] == "spark.job.failed" and envelope["severity"] == "error"
    return envelope


def test_a_java_error_titles_its_root_cause_not_py4j():
    sent = failed(Py4JJavaError(JAVA))
    assert sent["title"] == "Spark job nightly failed: Input path does not exist: file:/data/x"
    assert sent["body"] == "IOException: Input path does not exist: file:/data/x"
    assert sent["data"]["error_type"] == "Py4JJavaError"
    assert sent["data"]["error_message"] == sent["body"]


def test_a_python_error_in_a_task():
    sent = failed(Exception(PYTHON), "rollup")
    assert sent["title"] == "Spark job rollup failed: division by zero"
    assert sent["body"] == "ZeroDivisionError: division by zero"


def test_the_title_is_bounded_and_the_body_keeps_the_whole_line():
    sent = failed(ValueError("ValueError: " + "x" * 2000))
    assert len(sent["title"]) == TITLE_LIMIT and sent["title"].endswith("…")
    assert len(sent["body"]) == LIMIT


def test_an_error_without_text_names_its_type():
    sent = failed(GatewayGone())
    assert sent["title"] == "Spark job nightly failed: GatewayGone"
    assert sent["body"] == "GatewayGone" and sent["data"]["error_type"] == "GatewayGone"
