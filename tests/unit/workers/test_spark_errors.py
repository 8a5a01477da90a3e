"""workers/spark/errors.py: the telling line of a Spark job's error, as the texts
PySpark 4 gives them (copied from real runs), without starting Spark."""
from workers.spark.errors import LIMIT, reason

JAVA = ("An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.\n"
        ": org.apache.hadoop.mapred.InvalidInputException: Input path does not exist: file:/data/x\n"
        "\tat org.apache.hadoop.mapred.FileInputFormat.singleThreadedListStatus(FileInputFormat.java:306)\n"
        "\tat org.apache.spark.rdd.RDD.partitions(RDD.scala:297)\n"
        "Caused by: java.io.IOException: Input path does not exist: file:/data/x\n"
        "\tat org.apache.hadoop.mapred.LocatedFileStatusFetcher.getFileStatuses(Fetcher.java:1)\n")

PYTHON = ("An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
          '  File "/x/pyspark/worker.py", line 4327, in invoke_udf\n    run_process()\n'
          '  File "job.py", line 4, in <lambda>\n    rows.map(lambda x: 1 / 0)\n'
          "ZeroDivisionError: division by zero\n")


class Py4JJavaError(Exception):
    pass


class GatewayGone(Exception):
    def __str__(self):
        raise ConnectionError("the JVM is gone")


def test_a_java_error_gives_its_root_cause_line_not_the_trace():
    assert reason(Py4JJavaError(JAVA)) == "IOException: Input path does not exist: file:/data/x"


def test_a_python_error_in_a_task_gives_its_last_line():
    assert reason(Exception(PYTHON)) == "ZeroDivisionError: division by zero"


def test_a_spark_error_class_wins():
    text = "[PATH_NOT_FOUND] Path does not exist: file:/data/x. SQLSTATE: 42K03\n\tat org..."
    assert reason(Exception(text)) == "[PATH_NOT_FOUND] Path does not exist: file:/data/x. SQLSTATE: 42K03"


def test_bounded_plain_and_empty_errors():
    long = reason(ValueError("ValueError: " + "x" * 2000))
    assert len(long) == LIMIT and long.endswith("…")
    assert reason(ValueError("boom\nsecond line")) == "boom"
    assert reason(KeyError()) == "KeyError"
    assert reason(GatewayGone()) == "GatewayGone"  # str() failing never hides the failure
