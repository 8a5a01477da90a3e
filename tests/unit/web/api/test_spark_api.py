"""POST/GET /api/spark/rollup and the Jobs page, without running Spark (a rollup run by
Spark through them, and `flask spark rollup`: tests/integration/spark/test_spark_api.py)."""
import json

import pytest

from app import create_app
from app.settings import TestConfig
from tests.support import issue_token, sign_in


@pytest.fixture
def app(redis_server, redis, tmp_path):
    return create_app(TestConfig(redis_server.url, ARCHIVE_DIR=str(tmp_path / "archive"),
                                 ROLLUP_DIR=str(tmp_path / "rollup"),
                                 SPARK_LOG_DIR=str(tmp_path / "spark")))


def bearer(name):
    return {"Authorization": f"Bearer {issue_token(name)}"}


def test_only_admins(client, user, admin):
    assert client.post("/api/spark/rollup").status_code == 401
    assert client.post("/api/spark/rollup", headers=bearer(user[0])).status_code == 403
    assert client.get("/api/spark/rollup", headers=bearer(user[0])).status_code == 403
    sign_in(client, *user)
    assert client.get("/jobs").status_code == 403


def test_latest_rollup(client, admin, tmp_path):
    """404 before the first rollup (and /running says there is no summary), then the summary."""
    reply = client.get("/api/spark/rollup", headers=bearer(admin[0]))
    assert reply.status_code == 404 and reply.get_json()["error"] == "no rollup has run yet"
    running = client.get("/api/spark/rollup/running", headers=bearer(admin[0])).get_json()
    assert running == {"correlation_id": None, "has_summary": False}
    (tmp_path / "rollup").mkdir()
    (tmp_path / "rollup" / "summary.json").write_text(json.dumps({"rows_read": 3, "topics": []}))
    reply = client.get("/api/spark/rollup", headers=bearer(admin[0]))
    assert reply.status_code == 200 and reply.get_json()["rows_read"] == 3
    running = client.get("/api/spark/rollup/running", headers=bearer(admin[0])).get_json()
    assert running == {"correlation_id": None, "has_summary": True}


def test_one_rollup_at_a_time(client, admin, redis):
    """While the lock names a run (held here directly: no Spark), a second POST is
    409 naming it, and /running says which; once freed, nothing runs."""
    from app.spark import launcher
    running = client.get("/api/spark/rollup/running", headers=bearer(admin[0]))
    assert running.status_code == 200
    assert running.get_json() == {"correlation_id": None, "has_summary": False}
    redis.set(launcher.LOCK, "spark-rollup-held", ex=60)
    refused = client.post("/api/spark/rollup", headers=bearer(admin[0]))
    assert refused.status_code == 409
    assert refused.get_json() == {
        "correlation_id": "spark-rollup-held",
        "error": "a rollup is running already (spark-rollup-held); wait for it to end"}
    running = client.get("/api/spark/rollup/running", headers=bearer(admin[0])).get_json()
    assert running == {"correlation_id": "spark-rollup-held", "has_summary": False}
    assert launcher.release(redis, "spark-rollup-other") is False  # only its holder frees it
    assert launcher.release(redis, "spark-rollup-held") is True
    assert client.get("/api/spark/rollup/running", headers=bearer(admin[0])).get_json() == {
        "correlation_id": None, "has_summary": False}


def test_running_is_for_admins(client, user):
    assert client.get("/api/spark/rollup/running").status_code == 401
    assert client.get("/api/spark/rollup/running", headers=bearer(user[0])).status_code == 403


def test_the_lock_is_freed_the_moment_the_job_ends(redis):
    """The watcher waits on the process itself: no look-interval's delay after the end."""
    import subprocess
    import sys

    from app.spark import launcher
    redis.set(launcher.LOCK, "spark-rollup-short", ex=60)
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    launcher._watch(redis, "spark-rollup-short", process, refresh=0.1)  # refreshes, then frees
    assert process.returncode == 0 and launcher.running_rollup(redis) is None


def test_a_launch_that_cannot_start_frees_the_lock(app, redis, tmp_path):
    from app.spark import launcher
    config = dict(app.config, SPARK_LOG_DIR=str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(OSError):
        launcher.launch_rollup(config, launcher.Runs(), "ada", redis)
    assert launcher.running_rollup(redis) is None


@pytest.mark.parametrize("user", ["-ops", "--archive", "user:42", "Zo\u00eb M\u00fcller", "-"])
def test_the_rollup_job_is_handed_its_user_whatever_it_begins_with(user, monkeypatch):
    """A user id is any string (an account name may begin with '-'): the job's argument
    parser must not take one for an option of its own."""
    from app.spark import launcher
    from workers.spark.jobs import rollup

    monkeypatch.delenv("SPARK_MASTER", raising=False)
    command = launcher.rollup_command("archive", "out", user=user, master="local[1]")
    job = command[command.index("workers.spark.jobs.rollup") + 1:]
    assert rollup.parse_args(job).user == user
