"""What the archiver (workers/archiver.py) wrote, read back: for its unit tests and for the
tests that run it as a process."""
import json
import re

SHARD_FILE = re.compile(r"notifications(?:-(\d+))?\.jsonl")  # workers/archive_files.file_name


def archived(folder, shard=None):
    """Every archived entry (of shard ``shard``; None: of every shard, shard by shard),
    by day; a day whose file the archiver has not created yet (it makes the folder
    first) holds none. Only whole lines: a running archiver may be half-way through
    writing the last one."""
    files = []
    for day in sorted(folder.glob("date=*")):
        for path in day.glob("notifications*.jsonl"):
            match = SHARD_FILE.fullmatch(path.name)
            index = int(match.group(1) or 0) if match else None
            if index is not None and shard in (None, index):
                files.append((index, day.name, path))
    lines = []
    for _index, _day, path in sorted(files):
        written = path.read_text().split("\n")[:-1]  # after the last newline: not yet
        lines += [json.loads(line) for line in written if line]
    return lines

