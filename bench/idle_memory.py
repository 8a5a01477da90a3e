"""Where an idle websocket connection's memory goes, in the web process.

Starts Herald (``wsgi.py``) with tracemalloc on (bench/traced_server.py),
holds ``--clients`` idle Socket.IO clients on it (bench/loadgen.js
``--idle``: connected, authenticated, subscribed, then quiet), and compares
what Python had allocated before and after they connected, by the place
that allocated it: KiB per connection for each, the traced total, and the
process's RSS growth per connection (tracemalloc's own bookkeeping inflates
RSS here: bench/fanout.py ``--idle`` measures RSS without it). What RSS
holds beyond the traced total is memory Python does not trace (C
structures of sockets and libev watchers, the allocator's slack).

    .venv/bin/python bench/idle_memory.py [--clients 2000] [--top 25]
"""
import argparse
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from common import save  # first: it puts the project on sys.path
from fanout import LoadGenerators  # noqa: E402

from app.users import accounts, subscriptions  # noqa: E402
from app.web.auth import tokens  # noqa: E402
from tests.support import LiveServer, RedisServer, rss_mb, wait_until  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


class TracedServer(LiveServer):
    """LiveServer, run by bench/traced_server.py (snapshots on SIGUSR1)."""

    def start(self):
        self.snapshots = Path(tempfile.mkdtemp(prefix="herald-snapshots-"))
        self.taken = 0
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "traced_server.py"), str(self.snapshots)],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(self._ready, timeout=30, interval=0.1, message=f"web server ({self.log_path})")

    def snapshot(self):
        self.taken += 1
        path = self.snapshots / f"snapshot-{self.taken}.bin"
        self.process.send_signal(signal.SIGUSR1)
        wait_until(path.exists, timeout=120, interval=0.2, message="a tracemalloc snapshot")
        return tracemalloc.Snapshot.load(str(path))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--top", type=int, default=25, help="allocation sites listed")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="herald-bench-"))
    redis_server = RedisServer(folder)
    redis_server.start()
    server = generators = None
    try:
        client = redis_server.client()
        accounts.create_user(client, "bench", "bench-password")
        subscriptions.add(client, "bench", ["bench"], limit=10)
        token = tokens.issue("test-secret-key", "bench", accounts.get_user(client, "bench")["token_key"])
        server = TracedServer(redis_server.url, folder, MAX_CONNECTIONS_PER_ADDRESS="0",
                              MAX_SESSIONS_PER_ADDRESS="0")
        server.start()
        warm = LoadGenerators(server.url, token, 50, 1, idle=True)  # first-use costs aside
        time.sleep(1)
        warm.stop()
        time.sleep(1)
        before, rss_before = server.snapshot(), rss_mb(server.process.pid)
        generators = LoadGenerators(server.url, token, args.clients, 2, idle=True)
        time.sleep(2)
        after, rss_after = server.snapshot(), rss_mb(server.process.pid)
        held = generators.ready
        sites = after.compare_to(before, "lineno")
        traced = sum(stat.size_diff for stat in sites) / 1024 / held
        rows = [{"kib": stat.size_diff / 1024 / held, "objects": stat.count_diff / held,
                 "where": str(stat.traceback[0])} for stat in sites[:args.top]]
        by_package = {}  # the allocating file's package: site-packages/<name> or app/<name>
        for stat in sites:
            where = stat.traceback[0].filename
            package = (where.split("site-packages/")[1] if "site-packages/" in where
                       else where.replace(str(ROOT) + "/", "")).split("/")[0:2]
            name = "/".join(package) if package[0] == "app" else package[0]
            by_package[name] = by_package.get(name, 0) + stat.size_diff / 1024 / held
        packages = dict(sorted(by_package.items(), key=lambda item: -item[1]))
        result = {"clients": held, "traced_kib_per_connection": traced, "by_package": packages,
                  "rss_kib_per_connection": (rss_after - rss_before) * 1024 / held, "sites": rows}
        print(f"{held} idle connections: {traced:.2f} KiB traced per connection, "
              f"RSS {result['rss_kib_per_connection']:.1f} KiB (with tracemalloc's own)")
        for name, kib in packages.items():
            if abs(kib) >= 0.05:
                print(f"  {kib:6.2f} KiB  {name}")
        print("by allocation site:")
        for row in rows:
            print(f"  {row['kib']:6.2f} KiB  {row['objects']:5.1f} objects  {row['where']}")
        print(f"written to {save('idle_memory', result)}")
    finally:
        if generators is not None:
            generators.stop()
        if server is not None:
            server.stop()
        redis_server.stop()


if __name__ == "__main__":
    main()
