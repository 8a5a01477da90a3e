"""What the archiver (workers/archiver.py) wrote, read back: for its unit tests and for the
tests that run it as a process."""
import json

from workers.archiver import FILE_NAME


def archived(folder):
    """Every archived entry, by day; a day whose file the archiver has not
    created yet (it makes the folder first) holds none. Only whole lines: a
    running archiver may be half-way through writing the last one."""
    lines = []
    for day in sorted(folder.glob("date=*")):
        if (day / FILE_NAME).exists():
            written = (day / FILE_NAME).read_text().split("\n")[:-1]  # after the last newline: not yet
            lines += [json.loads(line) for line in written if line]
    return lines
