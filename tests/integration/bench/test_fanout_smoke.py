"""A tiny run of the fan-out benchmark (bench/fanout.py): a few clients, every server;
and of bench/idle_wakes.py, which shares its load generators; and of bench/live_read.py.

No timing assertions: it checks that the harness works end to end, that each
server delivers every notification to every client, and that the report has
its figures. The real figures come from `make bench` (bench/RESULTS.md).
"""
import json
import subprocess
import sys

import pytest

from tests.support import ROOT


def test_fanout_benchmark_runs_against_every_server():
    done = subprocess.run(
        [sys.executable, "bench/fanout.py", "--servers", "herald,herald2,per_connection,node",
         "--clients", "10", "--rates", "5", "--seconds", "1", "--idle", "20"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((ROOT / "bench" / "results" / "fanout.json").read_text())
    for kind in ("herald", "herald2", "per_connection", "node"):
        [run] = report["results"][kind]["rates"]
        assert run["connected"] == 10
        assert run["deliveries"] == run["published"] * 10, (kind, run)
        assert run["fewest_per_client"] == run["published"]
        assert report["results"][kind]["memory"]["idle_connections"] == 20
    assert "Herald's best / node's best" in done.stdout


@pytest.mark.parametrize("sse", [False, True], ids=["socketio", "sse"])
def test_idle_wakes_benchmark_runs(sse):
    """bench/idle_wakes.py, a few clients for a moment (Socket.IO or event streams):
    the harness works and reports."""
    done = subprocess.run(
        [sys.executable, "bench/idle_wakes.py", "--clients", "20", "--settle", "0.5",
         "--seconds", "1", *(["--sse"] if sse else [])],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((ROOT / "bench" / "results" / "idle_wakes.json").read_text())
    assert report["clients"] == 20 and report["sse"] is sse
    assert report["seconds"] >= 1 and report["cpu_share"] >= 0 and report["wakes_per_s"] > 0


def test_live_read_benchmark_runs():
    """bench/live_read.py, a few notifications a reader: both readers read every one."""
    done = subprocess.run(
        [sys.executable, "bench/live_read.py", "--count", "5", "--rate", "50", "--rounds", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((ROOT / "bench" / "results" / "live_read.json").read_text())
    for reader in ("redis-py", "herald"):
        [figure] = report[reader]["us_per_notification"]
        assert figure > 0
    assert report["herald_over_redis_py"] > 0
