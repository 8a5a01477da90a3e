"""The archive on disk: date-partitioned JSON Lines, its own bookmark, and its write lock.

``ARCHIVE_DIR/date=YYYY-MM-DD/notifications.jsonl`` holds one line per
notification (the whole envelope, ``id`` first), the date being the UTC day of
its id, in id order. The id on the last complete line of the newest file is
where archiving goes on (:func:`resume_position`); a line torn by a crash is
cut off when that is read.

A sharded history (``STREAM_SHARDS=N``, app/stream/shards.py) is archived shard
by shard: shard 0 in ``notifications.jsonl`` as ever, shard k in
``notifications-<k>.jsonl`` beside it (:func:`file_name`), each file in its
shard's id order, each line under its notification id (``<ms>-<seq>-<k>``), and
each shard's files their shard's own bookmark. Whoever reads the archive reads
``date=*/*.jsonl`` (the Spark rollup does).

Several archivers may share one ARCHIVE_DIR (shared storage on two hosts):
every write, and every read of the position that may cut a torn line, is
done holding :func:`locked`, an exclusive ``flock`` on ``ARCHIVE_DIR/.archiver.lock``.
So a torn line is only ever one left by a writer that died (the kernel drops
a dead process's lock), never one another writer is still appending, and a
writer checks under the lock that the archive ends where it thinks it does
before it appends (workers/archiver.py). On NFS, Linux carries ``flock`` as
a POSIX lock to the server (NFSv4, or v3 with lockd); storage without
working locks must not be shared.
"""
import contextlib
import fcntl
import logging
import os
from collections import defaultdict
from datetime import UTC, datetime

from app.stream.envelope import id_key, with_id

log = logging.getLogger("herald.archiver")

FILE_NAME = "notifications.jsonl"  # shard 0's (the only one with STREAM_SHARDS=1)
LOCK_NAME = ".archiver.lock"  # a dot file: Spark and Hadoop inputs skip it
FILE_MODE, FOLDER_MODE = 0o640, 0o750


def day_of(entry_id):
    """The UTC date (YYYY-MM-DD) of a stream id's milliseconds."""
    ms, _ = id_key(entry_id)
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")


def file_name(shard=0):
    """The name of shard ``shard``'s file in each day's folder."""
    return FILE_NAME if shard == 0 else f"notifications-{shard}.jsonl"


@contextlib.contextmanager
def locked(folder):
    """Hold the archive's exclusive write lock (blocking until it is free).
    Raises OSError when the lock file cannot be made or opened (a disk fault)."""
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock


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


def resume_position(folder, repair_all=False, shard=0):
    """The id of the newest archived notification (of shard ``shard``), or None for an
    empty archive (of that shard).

    A torn last line is cut off the newest file, or with ``repair_all`` off every
    file (a failed write may have torn several days' files at once). With more
    than one archiver, call it holding :func:`locked`.
    """
    newest = None
    for day in sorted(folder.glob("date=*"), reverse=True):
        path = day / file_name(shard)
        if not path.is_file():
            continue
        last = _last_line_id(path)
        if last and newest is None:
            newest = last
            if not repair_all:
                break
    return newest


def write(folder, entries, shard=0):
    """Append stream entries (each under its notification id) to their days' files of
    shard ``shard``, fsync'd; returns the last id written.

    Raises OSError when the disk fails (full, read-only): a line may then be torn.
    """
    by_day = defaultdict(list)
    for entry_id, fields in entries:
        by_day[day_of(entry_id)].append(with_id(fields[b"envelope"], entry_id) + b"\n")
    for day, lines in by_day.items():
        target = folder / f"date={day}"
        target.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        fd = os.open(target / file_name(shard), os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        with os.fdopen(fd, "ab") as handle:
            if os.fstat(fd).st_mode & 0o007:  # made by an older release, or another umask
                os.fchmod(fd, FILE_MODE)
            handle.write(b"".join(lines))
            handle.flush()
            os.fsync(fd)
    return entries[-1][0].decode()
