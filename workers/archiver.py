"""The archiver: ``herald:stream`` into date-partitioned JSON Lines files, for ever.

    python -m workers.archiver        # make run starts it; ARCHIVE_DIR, default var/archive

Each notification becomes one line (the whole envelope, ``id`` first) in
``ARCHIVE_DIR/date=YYYY-MM-DD/notifications.jsonl``, the date being the UTC
day of its id. Redis trims its history; the archive keeps everything, for
the Spark rollup job and anyone else.

The archive is its own bookmark: on start the archiver reads the id on the
last complete line of the newest file and goes on after it. Lines are
written in id order and fsync'd before more are read, and a line torn by a
crash is cut off on start, so nothing is written twice and nothing accepted
is skipped. If Redis has already trimmed entries the archiver never saw, it
says so in the log and goes on from the oldest one left.

A disk fault (full, read-only, gone) is not a Redis fault: it is logged once
as what it is, reported where /readyz and /metrics show it
(app/worker_status.py), and retried with backoff; before writing again the
archiver cuts off whatever a failed write left torn and goes on from the
last complete line. Files are readable by their owner and group only: they
hold private notifications too.
"""
import logging
import os
import signal
import time
from collections import defaultdict
from datetime import datetime, timezone

from app import history, logs, metrics, worker_status
from app.bus import STREAM
from app.config import archive_dir, redis_url
from app.notifications import id_key, with_id
from app.redis_client import UNAVAILABLE, connect

log = logging.getLogger("herald.archiver")

FILE_NAME = "notifications.jsonl"
READ_COUNT = 1000
BLOCK_MS = 1000
BACKOFF_FIRST, BACKOFF_MAX = 0.1, 2.0
DISK_BACKOFF_FIRST, DISK_BACKOFF_MAX = 0.5, 30.0
FILE_MODE, FOLDER_MODE = 0o640, 0o750
WORKER = "archiver"



def day_of(entry_id):
    """The UTC date (YYYY-MM-DD) of a stream id's milliseconds."""
    ms, _ = id_key(entry_id)
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d")


def _last_line_id(path):
    """The id on the last complete line of ``path``, cutting off a torn last line
    (which needs the file writable; reading does not)."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return None
        block = min(size, 128 * 1024)
        while True:
            handle.seek(size - block)
            tail = handle.read(block)
            end = tail.rfind(b"\n")
            if end == -1 and block < size:
                block = min(size, block * 2)
                continue
            break
        if end != len(tail) - 1:  # a line torn by a crash or a full disk: drop it
            keep = size - block + end + 1
            log.warning("cutting a torn line off the end of %s", path)
            os.truncate(path, keep)
            if end == -1:
                return None
        start = tail.rfind(b"\n", 0, end) + 1
        line = tail[start:end]
    if not line.startswith(b'{"id":"'):
        raise SystemExit(f"archiver: the last line of {path} is not an archived notification")
    return line[7:line.index(b'"', 7)].decode()


def resume_position(folder, repair_all=False):
    """The id of the newest archived notification, or None for an empty archive.

    A torn last line is cut off the newest file, or with ``repair_all`` off every
    file (a failed write may have torn several days' files at once).
    """
    days = sorted(p for p in folder.glob("date=*") if (p / FILE_NAME).is_file())
    newest = None
    for day in reversed(days):
        last = _last_line_id(day / FILE_NAME)
        if last and newest is None:
            newest = last
            if not repair_all:
                break
    return newest


def write(folder, entries):
    """Append stream entries to their days' files, fsync'd; returns the last id written.

    Raises OSError when the disk fails (full, read-only): a line may then be torn.
    """
    by_day = defaultdict(list)
    for entry_id, fields in entries:
        by_day[day_of(entry_id)].append(with_id(fields[b"envelope"], entry_id) + b"\n")
    for day, lines in by_day.items():
        target = folder / f"date={day}"
        target.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        fd = os.open(target / FILE_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        with os.fdopen(fd, "ab") as handle:
            if os.fstat(fd).st_mode & 0o007:  # made by an older release, or another umask
                os.fchmod(fd, FILE_MODE)
            handle.write(b"".join(lines))
            handle.flush()
            os.fsync(fd)
    return entries[-1][0].decode()


SPARK_OUTCOMES = {b"spark.job.succeeded": "spark_jobs_succeeded",
                  b"spark.job.failed": "spark_jobs_failed"}


class Archiver:
    """Follows the stream from the archive's own last id."""

    def __init__(self, client, folder):
        self.client = client
        self.folder = folder
        self.written = 0
        self.gap_checked = False
        self.disk_fault, self.disk_backoff = None, DISK_BACKOFF_FIRST
        try:
            folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
            self.position = resume_position(folder)
        except OSError as exc:  # a torn line on a read-only disk: repaired once writable
            self.disk_fault = f"cannot repair the archive in {folder}: {exc.strerror or exc}"
            worker_status.fault(client, WORKER, self.disk_fault)
            self.position = None

    def run(self, running):
        backoff, down = BACKOFF_FIRST, False
        log.info("archiving into %s from %s", self.folder, self.position or "the beginning")
        while running():
            try:
                self._check_gap()
                replies = self.client.xread({STREAM: self.position or "0-0"},
                                            count=READ_COUNT, block=BLOCK_MS)
            except UNAVAILABLE as exc:
                if not down:
                    log.warning("Redis is unreachable (%s); retrying with backoff", exc)
                down = True
                time.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
                continue
            if down:
                log.info("Redis is back")
            down, backoff = False, BACKOFF_FIRST
            for _stream, entries in replies:
                if entries and not self._store(entries):
                    break  # the disk failed: read again from the last complete line

    def _store(self, entries):
        """Write ``entries``; False when they were not (a disk fault, reported and waited
        out with backoff, or just repaired): read again from ``position`` then."""
        try:
            if self.disk_fault:
                self.position = self._repair()  # what is read next follows the repair
                log.info("the archive is writable again; going on from %s", self.position)
                self.disk_fault, self.disk_backoff = None, DISK_BACKOFF_FIRST
                worker_status.ok(self.client, WORKER)
                return False
            self.position = write(self.folder, entries)
        except OSError as exc:
            self._disk_failed(exc)
            return False
        self.written += len(entries)
        self._count_spark_outcomes(entries)
        return True

    def _disk_failed(self, exc):
        detail = (f"cannot write the archive in {self.folder}: {exc.strerror or exc} "
                  "(free space or make it writable; nothing is lost meanwhile)")
        if self.disk_fault != detail:
            log.error("%s; retrying with backoff", detail)
            worker_status.fault(self.client, WORKER, detail)
        self.disk_fault = detail
        time.sleep(self.disk_backoff)
        self.disk_backoff = min(self.disk_backoff * 2, DISK_BACKOFF_MAX)

    def _repair(self):
        """Cut what a failed write left torn at the end of any day's file; the id of
        the last complete line, from which to read again."""
        return resume_position(self.folder, repair_all=True)

    def _count_spark_outcomes(self, entries):
        """Spark job outcomes for /metrics: the archiver reads every notification
        exactly once, whichever way a job published it (Redis or ZeroMQ)."""
        for _entry_id, fields in entries:
            outcome = SPARK_OUTCOMES.get(fields.get(b"topic"))
            if outcome:
                metrics.count(self.client, outcome)

    def _check_gap(self):
        """Once per connection: say so if entries we never archived were trimmed away."""
        if self.gap_checked or self.position is None:
            return
        self.gap_checked = True
        if history.missed_history(self.client, self.position):
            log.warning("Redis trimmed notifications after %s before they were archived; "
                        "going on from the oldest one left", self.position)


def main():
    logs.configure()
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.clear())
    signal.signal(signal.SIGINT, lambda *_: running.clear())
    # Reads block for up to BLOCK_MS, so the read timeout must be longer than that.
    archiver = Archiver(connect(redis_url(), socket_timeout=BLOCK_MS / 1000 + 5), archive_dir())
    archiver.run(lambda: bool(running))
    log.info("stopped after archiving %d notifications", archiver.written)


if __name__ == "__main__":
    main()
