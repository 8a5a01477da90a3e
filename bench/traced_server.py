"""``python wsgi.py`` with tracemalloc on: SIGUSR1 writes a snapshot of what Python
has allocated to ``<folder>/snapshot-<n>.bin`` (bench/idle_memory.py reads them).

    .venv/bin/python bench/traced_server.py FOLDER   (with wsgi.py's environment)
"""
import runpy
import signal
import sys
import tracemalloc
from itertools import count
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRAMES = 8  # of each allocation's traceback: enough to say whose it is


def main():
    folder = Path(sys.argv[1])
    numbers = count(1)

    def dump(_signum, _frame):
        # Written aside and renamed: the reader never sees half a file.
        number = next(numbers)
        part = folder / f"snapshot-{number}.part"
        tracemalloc.take_snapshot().dump(str(part))
        part.rename(folder / f"snapshot-{number}.bin")

    tracemalloc.start(FRAMES)
    signal.signal(signal.SIGUSR1, dump)
    sys.path.insert(0, str(ROOT))
    sys.argv = [str(ROOT / "wsgi.py")]
    runpy.run_path(str(ROOT / "wsgi.py"), run_name="__main__")


if __name__ == "__main__":
    main()
