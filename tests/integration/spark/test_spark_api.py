"""A rollup run by Spark through POST /api/spark/rollup, and `flask spark rollup` passing the
job's exit status (the rest of the API: tests/unit/web/api/test_spark_api.py)."""
import json

from app.services import of as of_app
from tests.integration.spark.archive import generate
from tests.unit.web.api import test_spark_api as api

app = api.app  # the fixture: an app whose archive, rollups and Spark logs are in tmp_path
bearer = api.bearer


def test_launch_runs_the_job_in_a_process_of_its_own(app, client, admin, tmp_path, monkeypatch,
                                                    redis_server):
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    generate(tmp_path / "archive", 500, days=1)
    reply = client.post("/api/spark/rollup", headers=bearer(admin[0]))
    assert reply.status_code == 202
    correlation_id = reply.get_json()["correlation_id"]
    process = of_app(app).spark_runs.processes[correlation_id]
    assert process.wait(300) == 0
    log = (tmp_path / "spark" / f"{correlation_id}.log").read_text()
    assert "500 notifications read" in log
    assert json.loads((tmp_path / "rollup" / "summary.json").read_text())["correlation_id"] == correlation_id


def test_cli_spark_rollup_passes_the_jobs_exit_status(runner, tmp_path, monkeypatch, redis_server):
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    result = runner.invoke(args=["spark", "rollup", "--archive", str(tmp_path / "none"),
                                 "--out", str(tmp_path / "out"), "--master", "local[1]"])
    assert result.exit_code == 2
