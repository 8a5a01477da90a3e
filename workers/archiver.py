"""The archiver: ``herald:stream`` (each shard) into date-partitioned JSON Lines files, for ever.

    python -m workers.archiver        # make run starts it; ARCHIVE_DIR, default var/archive

Each notification becomes one line (the whole envelope, ``id`` first) in
``ARCHIVE_DIR/date=YYYY-MM-DD/notifications.jsonl``, the date being the UTC
day of its id (workers/archive_files.py). Redis trims its history; the
archive keeps everything, for the Spark rollup job and anyone else.

The archive is its own bookmark: the archiver goes on after the id on the
last complete line of the newest file. Lines are written in id order and
fsync'd before more are read, and a line torn by a crash is cut off, so
nothing is written twice and nothing accepted is skipped. If Redis has
already trimmed entries the archiver never saw, it says so in the log and
goes on from the oldest one left.

**Redundant archivers.** Run two (or more), on two hosts sharing ARCHIVE_DIR:
one writes, the others stand by. The writer holds the lease
``herald:archiver:lease`` (its instance id, ``ARCHIVER_LEASE`` seconds,
default 10), renewing it each time round its loop; a standby tries to take
it every second and does once it lapses (the writer died, hung or lost
Redis). On becoming the writer an archiver reads its position from the
archive, so the seam has no duplicate and no gap. A lease cannot stop a
writer that was paused past it from writing when it wakes, so each batch is
fenced: it is appended holding the archive's file lock, and only if, under
that lock, the lease is still ours and the archive's actual last id is the
position we read on from; otherwise the writer drops the batch and reads
its position again (or stands by, when the lease is gone). A clean stop
lets go of the lease, so a standby takes over at once.

**A sharded history** (``STREAM_SHARDS=N``, app/stream/shards.py) is followed shard
by shard: each shard has its own position, read from the archive as above but
from that shard's own files (``notifications.jsonl`` for shard 0, as ever,
``notifications-<k>.jsonl`` for shard k: workers/archive_files.py), each line
under its notification id (``<ms>-<seq>-<k>``); workers/archive_reads.py reads
the shards. Each batch is one shard's, fenced as above against that shard's
files. With one shard nothing changes.

A disk fault (full, read-only, gone) is not a Redis fault: it is logged once
as what it is, reported where /readyz and /metrics show it
(app/ops/worker_health.py), and retried with backoff; before writing again the
archiver cuts off whatever a failed write left torn and goes on from the
last complete line. Files are readable by their owner and group only: they
hold private notifications too.
"""
import logging
import signal
import time

from app.key_layout import connect
from app.ops import logs, metrics, worker_health
from app.ops.heartbeats import Heartbeat
from app.ops.leases import Lease
from app.redis_client import UNAVAILABLE, Outage
from app.settings import archive_dir, get, redis_url
from app.stream import state
from app.stream.envelope import id_key
from app.stream.shards import configured as configured_shards
from workers import archive_reads
from workers.archive_files import (
    FILE_NAME,
    FOLDER_MODE,
    day_of,
    file_name,
    locked,
    resume_position,
    write,
)

__all__ = ["Archiver", "FILE_NAME", "day_of", "file_name", "resume_position", "write", "main"]

log = logging.getLogger("herald.archiver")

BLOCK_MS = archive_reads.BLOCK_MS  # a read waits this long for something new, at most
BACKOFF_FIRST, BACKOFF_MAX = 0.1, 2.0
DISK_BACKOFF_FIRST, DISK_BACKOFF_MAX = 0.5, 30.0
WORKER = "archiver"
LEASE_KEY = "herald:archiver:lease"
DEFAULT_LEASE = 10.0
STANDBY_WAIT = 1.0  # seconds between a standby's tries for the lease, at most
LAG_EVERY = 1.0     # seconds between looks at the stream's newest id


def lease_seconds():
    """``ARCHIVER_LEASE``: seconds the writer's lease lasts unless renewed (default 10)."""
    return get("ARCHIVER_LEASE")  # renewed about every BLOCK_MS


SPARK_OUTCOMES = {b"spark.job.succeeded": "spark_jobs_succeeded",
                  b"spark.job.failed": "spark_jobs_failed"}


class Archiver:
    """Follows the stream (each shard's) from the archive's own last id (of that shard),
    while it holds the lease."""

    def __init__(self, client, folder, lease=DEFAULT_LEASE, holder=None, shards=None):
        self.client = client
        self.folder = folder
        self.lease = Lease(client, LEASE_KEY, lease, holder)
        self.shards = shards if shards is not None else configured_shards()
        self.leading = False
        self.positions = [None] * len(self.shards)  # per shard: its last archived id
        self.written = 0
        self.lag_seconds = 0.0
        self.lag_at = 0.0
        self.gap_checked = False
        self.disk_fault, self.disk_backoff = None, DISK_BACKOFF_FIRST

    @property
    def position(self):
        """The id of the newest notification archived (by time, over the shards; the
        only shard's last id with one), or None when nothing is."""
        known = [p for p in list(self.positions) if p]
        return max(known, key=id_key) if known else None

    @position.setter
    def position(self, notification_id):
        """Set the position of ``notification_id``'s shard (None: of every shard)."""
        if notification_id is None:
            self.positions = [None] * len(self.shards)
        else:
            self.positions[self.shards.locate(notification_id)[0].index] = notification_id

    def details(self):
        """What the heartbeat shows (attributes only: called from its thread); with
        several shards, ``positions`` too (one per shard)."""
        details = {"leader": self.leading, "position": self.position,
                   "lag_seconds": self.lag_seconds, "written": self.written}
        if len(self.shards) > 1:
            details["positions"] = list(self.positions)
        return details

    def run(self, running):
        outage = Outage(log, BACKOFF_FIRST, BACKOFF_MAX)
        log.info("archiving into %s as %s", self.folder, self.lease.holder)
        while running():
            try:
                if not self.lead():
                    time.sleep(min(STANDBY_WAIT, self.lease.ttl / 3))
                    continue
                self._check_gap()
                for shard, entries in archive_reads.read(self.client, self.shards,
                                                         self.positions):
                    if entries and not self.store(entries, shard):
                        break  # refused or failed: read again from ``positions``
                self._measure_lag()
            except UNAVAILABLE as exc:
                outage.failed(exc)
                continue
            outage.ok()
        if self.leading:
            self.lease.release()  # a standby takes over at once
            self.leading = False

    def _where(self):
        if len(self.shards) == 1:
            return self.positions[0] or "the beginning"
        return ", ".join(f"shard {k} from {p or 'the beginning'}"
                         for k, p in enumerate(self.positions))

    def lead(self):
        """Keep (or take) the lease; on becoming the writer, read the position from the
        archive. True while we are the writer."""
        ours = self.lease.keep()
        if ours and not self.leading:
            if not self._take_position():
                return False
            self.leading, self.gap_checked = True, False
            log.info("writing the archive from %s", self._where())
        elif not ours and self.leading:
            self._stand_by(f"the lease passed to {self.lease.holder_now()}")
        return self.leading

    def _stand_by(self, why):
        log.warning("standing by: %s", why)
        self.leading = False

    def _take_position(self):
        try:
            self.folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
            with locked(self.folder):
                self._resume(repair_all=bool(self.disk_fault))
        except OSError as exc:  # a torn line on a read-only disk, say: retried with backoff
            self._disk_failed(exc)
            return False
        self._disk_ok()
        worker_health.ok(self.client, WORKER)  # the writer's archive works (a dead one's report goes)
        return True

    def _resume(self, repair_all=False):
        """Every shard's position, read from the archive (hold :func:`locked`)."""
        self.positions = [resume_position(self.folder, repair_all=repair_all, shard=shard.index)
                          for shard in self.shards]

    def store(self, entries, shard=None):
        """Write ``entries`` of ``shard`` (shard 0 by default; read on from its
        position), fenced; False when they were not written (a disk fault, waited out
        with backoff; a repair; another writer): the caller reads again from
        ``positions`` then."""
        shard = shard if shard is not None else self.shards[0]
        k = shard.index
        try:
            with locked(self.folder):
                if self.disk_fault:
                    self._resume(repair_all=True)
                    self._disk_ok()
                    log.info("the archive is writable again; going on from %s", self._where())
                    return False
                if not self.lease.confirm():
                    self._stand_by("the lease is no longer ours; the batch was not written")
                    return False
                actual = resume_position(self.folder, shard=k)
                if actual != self.positions[k]:
                    log.warning("the archive ends at %s, not at %s (another archiver wrote); "
                                "going on from there", actual, self.positions[k])
                    self.positions[k] = actual
                    return False
                if shard.suffix:  # archived under their notification ids
                    entries = [(shard.public(entry_id).encode(), fields)
                               for entry_id, fields in entries]
                self.positions[k] = write(self.folder, entries, shard=k)
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
            worker_health.fault(self.client, WORKER, detail)
        self.disk_fault = detail
        time.sleep(self.disk_backoff)
        self.disk_backoff = min(self.disk_backoff * 2, DISK_BACKOFF_MAX)

    def _disk_ok(self):
        if self.disk_fault:
            self.disk_fault, self.disk_backoff = None, DISK_BACKOFF_FIRST
            worker_health.ok(self.client, WORKER)

    def _measure_lag(self):
        """Seconds between the stream's newest id and our position (the most of any
        shard's), once a second."""
        if time.monotonic() < self.lag_at:
            return
        self.lag_at = time.monotonic() + LAG_EVERY
        self.lag_seconds = archive_reads.lag_seconds(self.client, self.shards, self.positions)

    def _count_spark_outcomes(self, entries):
        """Spark job outcomes for /metrics: the archiver reads every notification
        exactly once, whichever way a job published it (Redis or ZeroMQ)."""
        for _entry_id, fields in entries:
            outcome = SPARK_OUTCOMES.get(fields.get(b"topic"))
            if outcome:
                metrics.count(self.client, outcome)

    def _check_gap(self):
        """Once per lead: say so if entries we never archived were trimmed away."""
        if self.gap_checked:
            return
        self.gap_checked = True
        for shard in self.shards:
            position = self.positions[shard.index]
            if position is not None and state.missed_history(self.client, position,
                                                              shard=shard):
                log.warning("Redis trimmed notifications after %s before they were archived; "
                            "going on from the oldest one left", position)


def main():
    logs.configure()
    lease = lease_seconds()
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.clear())
    signal.signal(signal.SIGINT, lambda *_: running.clear())
    # Reads block for up to BLOCK_MS, so the read timeout must be longer than that.
    client = connect(redis_url(), socket_timeout=BLOCK_MS / 1000 + 5)
    archiver = Archiver(client, archive_dir(), lease)
    beat = Heartbeat(client, "archiver", archiver.details).start()
    try:
        archiver.run(lambda: bool(running))
    finally:
        beat.stop()
    log.info("stopped after archiving %d notifications", archiver.written)


if __name__ == "__main__":
    main()
