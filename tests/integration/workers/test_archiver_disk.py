"""The archiver on a disk that fills up: the fault is told for what it is and shown in
/metrics, nothing is lost or written twice, and the torn line is cut before writing
again. As root (CI) on a real, small tmpfs; otherwise on a directory made read-only."""
import contextlib
import json
import os
import stat
import subprocess

from app import create_app
from app.ops import worker_health
from app.settings import TestConfig
from app.stream.keys import STREAM
from app.stream.publish import Bus
from tests.helpers.archives import archived
from tests.integration.workers.test_archiver import ArchiverProcess
from tests.support import wait_until
from workers.archiver import FILE_NAME


@contextlib.contextmanager
def small_disk(folder):
    """``folder`` on a disk with little room; yields a function that gives it room."""
    folder.mkdir()
    if os.geteuid() == 0:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k,mode=0755", "tmpfs", str(folder)],
                       check=True)
        try:
            yield lambda: subprocess.run(["mount", "-o", "remount,size=16m", str(folder)],
                                         check=True)
        finally:
            subprocess.run(["umount", "-l", str(folder)], check=False)
    else:  # a user cannot mount: a folder that cannot be written to fails the same way
        folder.chmod(0o555)
        try:
            yield lambda: folder.chmod(0o755)
        finally:
            folder.chmod(0o755)


def whole_lines(folder):
    """How many lines are archived, or None while one is torn (the disk is full)."""
    try:
        return len(archived(folder))
    except ValueError:
        return None


def test_a_full_disk_is_reported_survived_and_repaired(redis_server, redis, tmp_path):
    folder = tmp_path / "archive"
    bus = Bus(redis)
    with small_disk(folder) as make_room:
        archiver = ArchiverProcess(redis_server.url, folder, tmp_path / "archiver.log")
        archiver.start()
        try:
            ids = [bus.publish("disk.fill", f"n{i}", data={"pad": "x" * 900}) for i in range(300)]
            wait_until(lambda: "archiver" in worker_health.faults(redis), timeout=20,
                       message="the disk fault reported")
            detail = worker_health.faults(redis)["archiver"]["detail"]
            assert "cannot write the archive" in detail
            metrics = create_app(TestConfig(redis_server.url)).test_client().get("/metrics").text
            assert 'herald_worker_fault{worker="archiver"} 1.0' in metrics
            log = (tmp_path / "archiver.log").read_text()
            assert "Redis is unreachable" not in log
            make_room()
            wait_until(lambda: whole_lines(folder) == len(ids), timeout=60,
                       message="everything archived once there is room")
            assert "archiver" not in worker_health.faults(redis)
            # Every line whole, every notification once, in order.
            assert [line["id"] for line in archived(folder)] == ids
            assert ids == [entry_id.decode() for entry_id, _ in redis.xrange(STREAM)]
            for day in folder.glob("date=*"):
                mode = stat.S_IMODE((day / FILE_NAME).stat().st_mode)
                assert mode & 0o007 == 0, oct(mode)  # not world-readable: private ones are here
                assert all(json.loads(line) for line in (day / FILE_NAME).read_text().splitlines())
        finally:
            archiver.stop()
