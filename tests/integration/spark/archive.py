"""Writing archives for tests: the archiver's own format, made up on the spot."""
import json
import random
import time
from pathlib import Path

TOPICS = ["ops.deploy", "ops.db.slow", "spark.job.done", "billing.invoice", "demo.signup"]
SEVERITIES = ["info", "success", "warning", "error", "critical"]
DAY_MS = 86_400_000


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def generate(folder, count, days=5, seed=7, start_ms=1_795_000_000_000):
    """``count`` notifications over ``days`` days in ``folder`` (date=…/notifications.jsonl)."""
    rng = random.Random(seed)
    folder = Path(folder)
    per_day = count // days
    for day in range(days):
        n = per_day if day < days - 1 else count - per_day * (days - 1)
        first = start_ms - start_ms % DAY_MS + day * DAY_MS
        target = folder / f"date={time.strftime('%Y-%m-%d', time.gmtime(first / 1000))}"
        target.mkdir(parents=True, exist_ok=True)
        with open(target / "notifications.jsonl", "w") as out:
            for i in range(n):
                ms = first + i * (DAY_MS // max(n, 1))
                out.write(json.dumps({"id": f"{ms}-{i}", "topic": rng.choice(TOPICS), "title": "t",
                                      "severity": rng.choice(SEVERITIES), "ts": iso(ms)}) + "\n")
    return folder
