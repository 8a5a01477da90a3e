"""Every worker process beats in ``herald:workers:beats`` with its role and details while
it runs, and removes its beat when it stops cleanly (SIGTERM)."""
import pytest

from app.ops.heartbeats import BEATS
from tests.integration.workers.processes import WorkerProcesses, beats
from tests.support import Bridge, wait_until

DETAILS = {
    "workers.archiver": ("archiver", {"leader", "position", "lag_seconds", "written"}),
    "workers.digest": ("digest", {"consumer", "collected", "sent", "pending"}),
    "workers.webhooks": ("webhooks", {"active", "queued", "dispatched"}),
}


def beat_of(redis, role, pid):
    return next((b for b in beats(redis, role).values()
                 if b["instance"].endswith(f":{pid}")), None)


@pytest.mark.parametrize("module", sorted(DETAILS))
def test_a_worker_beats_while_it_runs_and_not_after_sigterm(redis_server, redis, tmp_path, module):
    role, keys = DETAILS[module]
    with WorkerProcesses(redis_server.url, tmp_path) as start:
        worker = start(module, ARCHIVE_DIR=str(tmp_path / "archive"))
        beat = wait_until(lambda: beat_of(redis, role, worker.pid), timeout=10,
                          message=f"{role}'s heartbeat")
        assert keys <= set(beat["details"]), beat
        assert beat["every"] == 0.5
        worker.stop()
        assert worker.process.returncode == 0
        assert beat_of(redis, role, worker.pid) is None
    assert redis.hlen(BEATS) == 0


def test_the_bridge_beats_with_its_backlog_and_endpoints(redis_server, redis, tmp_path):
    bridge = Bridge(redis_server.url, tmp_path, HEARTBEAT_INTERVAL="0.5")
    bridge.start()
    try:
        beat = wait_until(lambda: beat_of(redis, "bridge", bridge.process.pid), timeout=10,
                          message="the bridge's heartbeat")
        assert beat["details"]["endpoints"] == [bridge.pull, bridge.router, bridge.xpub]
        assert beat["details"]["backlog"] == 0 and "received" in beat["details"]
    finally:
        bridge.stop()
    assert bridge.process.returncode == 0
    assert beat_of(redis, "bridge", bridge.process.pid) is None
