"""The archiver: date-partitioned JSON Lines, resumed after a kill, nothing twice."""
import os
import signal
import subprocess
import sys

import pytest

from app.stream.publish import Bus
from app.stream.shards import configured as configured_shards
from tests.helpers.archives import archived
from tests.support import ROOT, wait_until
from workers.archiver import day_of, file_name, resume_position


class ArchiverProcess:
    def __init__(self, redis_url, folder, log_path):
        # A short lease: a restart after a kill waits for the dead one's lease to lapse.
        self.env = dict(os.environ, REDIS_URL=redis_url, ARCHIVE_DIR=str(folder),
                        ARCHIVER_LEASE="3")
        self.log_path = log_path
        self.process = None

    def start(self):
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "workers.archiver"], cwd=ROOT,
                                        env=self.env, stdout=self.log, stderr=subprocess.STDOUT)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        self.log.close()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(15)
        if not self.log.closed:
            self.log.close()


@pytest.fixture
def archiver(redis_server, redis, tmp_path):
    process = ArchiverProcess(redis_server.url, tmp_path / "archive", tmp_path / "archiver.log")
    yield process
    process.stop()


def test_resumes_after_a_kill_without_writing_twice(archiver, redis, tmp_path):
    bus = Bus(redis)
    folder = tmp_path / "archive"
    first = [bus.publish("arch.a", f"a{i}", data={"i": i}) for i in range(500)]
    archiver.start()
    wait_until(lambda: len(archived(folder)) == 500 if folder.exists() else False, timeout=30,
               message="the first 500 archived")
    archiver.kill()
    second = [bus.publish("arch.b", f"b{i}", user="ann") for i in range(500)]
    archiver.start()
    wait_until(lambda: len(archived(folder)) >= 1000, timeout=30, message="the next 500")
    archiver.stop()
    lines = archived(folder)
    assert [line["id"] for line in lines] == first + second
    assert lines[0]["data"] == {"i": 0} and lines[-1]["user"] == "ann"
    assert list(lines[0])[0] == "id"
    assert {p.name for p in folder.glob("date=*")} == {f"date={day_of(i)}" for i in first + second}


def test_a_torn_last_line_is_cut_off_and_rewritten(archiver, redis, tmp_path):
    bus = Bus(redis)
    folder = tmp_path / "archive"
    ids = [bus.publish("arch.t", f"t{i}") for i in range(20)]
    archiver.start()
    wait_until(lambda: len(archived(folder)) == 20 if folder.exists() else False, timeout=30,
               message="20 archived")
    archiver.stop()
    # As if a crash tore the write of the last line: half of it is on disk.
    shard = configured_shards().of_topic("arch.t").index  # (0 unless sharded)
    path = folder / f"date={day_of(ids[-1])}" / file_name(shard)
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[:last_start + 15])
    assert resume_position(folder, shard=shard) == ids[-2]
    archiver.start()
    more = bus.publish("arch.t", "after")
    wait_until(lambda: len(archived(folder)) == 21, timeout=30, message="rewritten")
    assert [line["id"] for line in archived(folder)] == ids + [more]


def test_empty_archive_starts_from_the_beginning(tmp_path):
    assert resume_position(tmp_path) is None
