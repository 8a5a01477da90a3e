"""The rollup job on a 100,000-notification archive: the notifier's cost, and how
soon the browser shows the result.

- run time of the rollup (read, aggregate, write Parquet) without and with
  the notifier (started, progress every 2 s, succeeded: published to a real
  Redis), alternating, ``--runs`` times each, on one warm SparkSession;
- the delay from the job's end (its work done) to the Jobs page in headless
  Chromium showing it succeeded.

    .venv/bin/python bench/spark_rollup.py [--count 100000] [--runs 3]
"""
import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from common import browser_page, save, stack  # first: it puts the project on sys.path
from pyspark.sql import SparkSession  # noqa: E402

from tests.integration.spark.archive import generate  # noqa: E402
from tests.support import wait_until  # noqa: E402
from workers.spark.jobs.rollup import rollup  # noqa: E402
from workers.spark.notifier import SparkJobNotifier  # noqa: E402

WATCH_STATUS = """(id) => {
  window.shownAt = null;
  new MutationObserver(function () {
    var card = document.querySelector('#jobs li[data-id="' + id + '"]');
    if (card && card.getAttribute('data-status') === 'succeeded' && !window.shownAt) {
      window.shownAt = Date.now();
    }
  }).observe(document.getElementById('jobs'), {subtree: true, childList: true, attributes: true});
}"""


def timed(function):
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="herald-bench-spark-"))
    archive = generate(folder / "archive", args.count)
    spark = (SparkSession.builder.master("local[*]").appName("herald-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    result = {"count": args.count, "without_notifier_s": [], "with_notifier_s": []}
    try:
        with stack(topics=("spark.job",), admin=True) as (redis_server, _client, server, _key):
            os.environ["REDIS_URL"] = redis_server.url  # where the notifier publishes
            rollup(spark, archive, folder / "warm-up")
            for _i in range(args.runs):
                result["without_notifier_s"].append(
                    timed(lambda: rollup(spark, archive, folder / "plain")))

                def notified():
                    with SparkJobNotifier("rollup", spark, interval=2.0) as run:
                        run.result(**rollup(spark, archive, folder / "notified")[0])
                result["with_notifier_s"].append(timed(notified))

            with browser_page(server) as page:
                page.goto(server.url + "/jobs")
                page.wait_for_selector("#connection[data-state=connected]")
                page.wait_for_timeout(500)  # the page subscribes to spark.job on connect
                correlation_id = "bench-browser"
                page.evaluate(WATCH_STATUS, correlation_id)
                with SparkJobNotifier("rollup", spark, correlation_id=correlation_id) as run:
                    run.result(**rollup(spark, archive, folder / "shown")[0])
                    ended = time.time() * 1000
                shown = wait_until(lambda: page.evaluate("window.shownAt"), timeout=30,
                                   message="the result in the browser")
                result["end_to_browser_ms"] = shown - ended
    finally:
        spark.stop()
    plain, notified = statistics.median(result["without_notifier_s"]), statistics.median(
        result["with_notifier_s"])
    result["overhead_s"] = notified - plain
    print(f"rollup over {args.count:,} notifications, median of {args.runs} runs each:")
    runs_without = ", ".join(f"{v:.2f}" for v in result["without_notifier_s"])
    runs_with = ", ".join(f"{v:.2f}" for v in result["with_notifier_s"])
    print(f"  without the notifier {plain:6.2f} s   ({runs_without})")
    print(f"  with the notifier    {notified:6.2f} s   ({runs_with})")
    print(f"  overhead             {notified - plain:+6.2f} s ({(notified - plain) / plain:+.1%})")
    print(f"job's end -> result shown in the browser: {result['end_to_browser_ms']:.0f} ms")
    print(f"written to {save('spark_rollup', result)}")


if __name__ == "__main__":
    main()
