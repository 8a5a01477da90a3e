"""The rollup's pure transform on hand-made input, compared with assertDataFrameEqual."""
from pyspark.testing import assertDataFrameEqual

from workers.spark.jobs.rollup import ARCHIVE_SCHEMA, transform

ROWS = [
    # id, topic, severity, ts, user
    ("1-0", "ops.deploy", "info", "2026-11-20T10:00:00.000Z", None),
    ("2-0", "ops.deploy", "info", "2026-11-20T11:00:00.000Z", None),
    ("3-0", "ops.deploy", "error", "2026-11-20T12:00:00.000Z", "ann"),
    ("4-0", "ops.deploy", "info", "2026-11-21T09:00:00.000Z", None),
    ("5-0", "billing", None, "2026-11-21T23:59:59.999Z", None),      # no severity: info
    ("6-0", None, "info", "2026-11-21T10:00:00.000Z", None),          # unreadable: left out
    ("7-0", "billing", "critical", None, None),                       # unreadable: left out
]


def test_counts_per_day_topic_and_severity(spark):
    counts, _ = transform(spark.createDataFrame(ROWS, ARCHIVE_SCHEMA))
    expected = spark.createDataFrame(
        [("2026-11-20", "ops.deploy", "info", 2), ("2026-11-20", "ops.deploy", "error", 1),
         ("2026-11-21", "ops.deploy", "info", 1), ("2026-11-21", "billing", "info", 1)],
        "day string, topic string, severity string, count long")
    assertDataFrameEqual(counts, expected)


def test_first_and_last_seen_per_topic(spark):
    _, topics = transform(spark.createDataFrame(ROWS, ARCHIVE_SCHEMA))
    expected = spark.createDataFrame(
        [("ops.deploy", 4, "2026-11-20T10:00:00.000Z", "2026-11-21T09:00:00.000Z"),
         ("billing", 1, "2026-11-21T23:59:59.999Z", "2026-11-21T23:59:59.999Z")],
        "topic string, total long, first_seen string, last_seen string")
    assertDataFrameEqual(topics, expected)


def test_empty_input_gives_empty_output(spark):
    counts, topics = transform(spark.createDataFrame([], ARCHIVE_SCHEMA))
    assert counts.count() == 0 and topics.count() == 0
