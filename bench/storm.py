"""A reconnect storm: the web process holding every client is killed and restarted.

``--clients`` copies of Herald's browser client (clients/js/herald.js, run
unchanged in Node by bench/storm.js) are connected to one web process and
live; notifications are published at a steady rate (``--rate`` a second,
straight to Redis, each with its publish time); the web process is killed
(SIGKILL) and started again on the same port after ``--outage`` seconds,
with the bounds under test; every client comes back with its last_id.
Reported, per configuration:

- the time from starting the new process until every client is live again
  (replayed to), and until the first one is;
- the live-delivery delay (publish to receipt) of what was published during
  the storm, to the clients already back: p50 / p99 / max; beside the same
  before the kill (``before`` seconds, all clients live: the harness's own
  baseline, 5,000 clients in one Node process);
- the peak RSS of the restarted process (sampled every 50 ms);
- connect attempts after the kill, and "retry later" refusals (the clients'
  count and the server's ``herald_connects_deferred``);
- and a check that every client received every notification exactly once,
  in order (no gap, no duplicate), and reconnected with its last_id.

Configurations (``--configs``): ``default`` (Herald's defaults: replays
bounded by REPLAY_CONCURRENCY / REPLAY_QUEUE, no ADMIT_RATE), ``rate`` (the
same and ADMIT_RATE / ADMIT_BURST as given) and ``unbounded`` (all 0: no
admission control). The clients connect first to a process without bounds;
only the restarted process has them.

    .venv/bin/python bench/storm.py [--clients 5000] [--rate 2] [--configs default,rate,unbounded]
"""
import argparse
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.stream.publish import Bus  # noqa: E402
from app.users import accounts, subscriptions  # noqa: E402
from tests.support import LiveServer, RedisServer, SteadyPublisher, cpu_seconds, rss_mb, wait_until  # noqa: E402

TOPIC = "storm"
UNBOUNDED = {"ADMIT_RATE": "0", "ADMIT_BURST": "0", "REPLAY_CONCURRENCY": "0", "REPLAY_QUEUE": "0"}


class StormClients:
    """bench/storm.js: ``count`` herald.js clients in one Node process, driven over
    its stdin/stdout (one command, one JSON answer; every wait bounded)."""

    def __init__(self, url, tokens, count, folder, ready_timeout=300, base=500, cap=5000, plain=False):
        self.log = open(Path(folder) / "storm-clients.log", "wb")
        self.process = subprocess.Popen(
            ["node", str(ROOT / "bench" / "storm.js"), "--url", url, "--tokens", ",".join(tokens),
             "--clients", str(count), "--base", str(base), "--cap", str(cap),
             "--plain", "1" if plain else "0"],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        try:
            first = self._line(ready_timeout)
        except AssertionError:
            self.stop()  # never left behind, whatever went wrong
            raise
        if first != f"ready {count}":
            self.stop()
            raise AssertionError(f"storm clients not ready: {first!r}")

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def _line(self, timeout):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer from bench/storm.js within {timeout} s") from None
        if line is None:
            raise AssertionError("bench/storm.js exited")
        return line

    def ask(self, command, timeout=60):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return json.loads(self._line(timeout))

    def status(self, entry_id=""):
        return self.ask(f"status {entry_id}".strip())

    def check(self, ids, folder):
        path = Path(folder) / "expected-ids.json"
        path.write_text(json.dumps(ids))
        return self.ask(f"check {path}", timeout=120)

    def stop(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.write("quit\n")
                self.process.stdin.flush()
                self.process.wait(15)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)
        self.reader.join(10)  # it ends at the end of the output
        for pipe in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                pipe.close()
        self.log.close()


class PeakRss(threading.Thread):
    """Samples a process's resident memory every ``every`` seconds; ``peak`` in MB.
    Every ``slice`` seconds it also notes the CPU share (of one core) used meanwhile
    by that process and by ``others`` (the clients): ``timeline``, a list of
    ``[seconds since the start, server share, clients' share, server RSS MB]``, to
    tell which side a storm waits on, and when its memory peaks."""

    def __init__(self, pid, every=0.05, others=(), slice=0.5):
        super().__init__(daemon=True)
        self.pid, self.every, self.peak = pid, every, 0.0
        self.others, self.slice, self.timeline = list(others), slice, []
        self.stopping = threading.Event()

    def run(self):
        started = last = time.monotonic()
        used = (cpu_seconds([self.pid]), cpu_seconds(self.others))
        while not self.stopping.is_set():
            try:
                rss = rss_mb(self.pid)
                self.peak = max(self.peak, rss)
                now = time.monotonic()
                if now - last >= self.slice:
                    now_used = (cpu_seconds([self.pid]), cpu_seconds(self.others))
                    self.timeline.append([round(now - started, 1)] + [
                        round((b - a) / (now - last), 2) for a, b in zip(used, now_used, strict=True)
                    ] + [round(rss, 1)])
                    used, last = now_used, now
            except (OSError, AssertionError):
                return
            time.sleep(self.every)

    def stop(self):
        self.stopping.set()
        self.join(5)


def settle(crowd, done, timeout, entry_id=""):
    """Wait (bounded) until ``done(status)``; False when it did not come to that."""
    try:
        wait_until(lambda: done(crowd.status(entry_id)), timeout=timeout, interval=0.2,
                   message="the clients")
        return True
    except AssertionError:
        return False


def deferred_by_server(server):
    """``herald_connects_deferred`` of the process behind ``server`` (its /metrics), or
    None when it does not answer."""
    try:
        text = requests.get(server.url + "/metrics", timeout=10).text
    except requests.RequestException:
        return None
    total = 0.0
    for line in text.splitlines():
        if line.startswith("herald_connects_deferred_total{") or line.startswith("herald_connects_deferred{"):
            total += float(line.rsplit(" ", 1)[1])
    return int(total)


def relay_lag_by_server(server):
    """``herald_relay_lag_seconds`` of the restarted process (publish to its fan-out, a
    batch each) as ``{bound: batches at most that late}``: the server's own share of
    the live delay, apart from the clients' (5,000 in one Node process lag too)."""
    try:
        text = requests.get(server.url + "/metrics", timeout=10).text
    except requests.RequestException:
        return None
    counts = {}
    for line in text.splitlines():
        if line.startswith("herald_relay_lag_seconds_bucket{"):
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            counts[bound] = counts.get(bound, 0) + int(float(line.rsplit(" ", 1)[1]))
    return counts


def make_users(client, users):
    """``users`` users subscribed to the storm's topic; their (name, password) pairs."""
    pairs = [(f"storm{n}", f"storm{n}-password") for n in range(users)]
    for name, password in pairs:
        accounts.create_user(client, name, password)
        subscriptions.add(client, name, [TOPIC], limit=10)
    return pairs


def storm(redis_url, client, folder, clients, env, interval=0.05, outage=1.0, users=5,
          settle_timeout=180, before=3.0, after=1.0, cap=5000, profile=None, plain=False):
    """One storm, start to end; returns the figures (see the module). ``env``: the
    restarted process's bounds; ``cap``: the clients' widest reconnect window (ms).
    Every process it starts is stopped before it returns."""
    bus = Bus(client)
    server = LiveServer(redis_url, folder, MAX_CONNECTIONS_PER_ADDRESS="0", MAX_SESSIONS_PER_ADDRESS="0",
                        **UNBOUNDED)
    crowd = publisher = sampler = spy = None
    try:
        server.start()
        tokens = [server.token(name, password) for name, password in make_users(client, users)]
        crowd = StormClients(server.url, tokens, clients, folder, cap=cap, plain=plain)
        publisher = SteadyPublisher(
            lambda title: bus.publish(f"{TOPIC}.tick", title, data={"t": time.time() * 1000}),
            interval=interval)
        publisher.start()
        wait_until(lambda: publisher.accepted, timeout=10, message="a first publish")
        first = publisher.accepted[0]
        wait_until(lambda: crowd.status(first)["have"] == clients, timeout=60,
                   interval=0.2, message="every client live")
        time.sleep(before)
        steady_rss = rss_mb(server.process.pid)  # every client connected and live
        crowd.ask("mark")
        server.kill()
        time.sleep(outage)
        for name in UNBOUNDED:  # the restarted process: Herald's defaults, but for ``env``
            server.env.pop(name, None)
        server.env.update(env)
        crowd.ask(f"restarted {int(time.time() * 1000)}")
        started = time.monotonic()
        server.start()
        healthy_s = time.monotonic() - started
        sampler = PeakRss(server.process.pid, others=[crowd.process.pid])
        sampler.start()
        if profile:  # py-spy over the restarted process, from its start until the clients are back
            spy = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid",
                                    str(server.process.pid), "--rate", "200", "--format", "raw",
                                    "--nonblocking", "--output", str(profile)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        settled = settle(crowd, lambda status: status["back"] == clients, settle_timeout)
        if spy is not None:
            spy.send_signal(signal.SIGINT)  # it writes what it has on SIGINT
            spy.wait(30)
        time.sleep(after)
        publisher.stop()
        marker = bus.publish(f"{TOPIC}.tick", "the last", data={"t": time.time() * 1000})
        settled = settle(crowd, lambda status: status["have"] == clients, 60, marker) and settled
        sampler.stop()
        result = crowd.check(publisher.accepted + [marker], folder)
        result.update(settled=settled, peak_rss_mb=round(sampler.peak, 1),
                      steady_rss_mb=round(steady_rss, 1), clients_kind="plain" if plain else "herald.js",
                      healthy_after_s=round(healthy_s, 2), server_deferred=deferred_by_server(server),
                      server_relay_lag=relay_lag_by_server(server),
                      published=len(publisher.accepted) + 1, env=env,
                      cpu_timeline=sampler.timeline)
        return result
    finally:
        if publisher is not None and publisher.is_alive():
            publisher.stop()
        if sampler is not None:
            sampler.stop()
        if spy is not None and spy.poll() is None:
            spy.kill()
            spy.wait(10)
        if crowd is not None:
            crowd.stop()
        server.stop()


def row(name, r):
    """One line of the report's table."""
    def ms(value):
        return "–" if value is None else f"{value / 1000:.1f} s"

    def n(value):
        return "–" if value is None else f"{value:,.0f}"
    back = ms(r["all_back_ms"]) if r["not_back"] == 0 else f"{r['not_back']:,} never back"
    return (f"| {name} | {back} (first {ms(r['first_back_ms'])}) | "
            f"{n(r['storm_live_p50_ms'])} / {n(r['storm_live_p99_ms'])} / {n(r['storm_live_max_ms'])} ms "
            f"({r['storm_live_deliveries']:,}; before the kill {n(r['calm_live_p50_ms'])} / "
            f"{n(r['calm_live_p99_ms'])} / {n(r['calm_live_max_ms'])}) | {r['peak_rss_mb']} MB "
            f"({r['peak_rss_mb'] / r['steady_rss_mb']:.2f}× the {r['steady_rss_mb']} MB before) | "
            f"{r['attempts_after_kill']:,} | {r['busy_refusals']:,} "
            f"({r['clients_refused_busy']:,} clients; server {n(r['server_deferred'])}) | "
            f"{r['mismatched']:,} / {r['wrong_last_id']:,} / {r['relapsed']:,} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=2, help="notifications a second")
    parser.add_argument("--outage", type=float, default=1.0, help="seconds the process is down")
    parser.add_argument("--configs", default="default,rate,unbounded")
    parser.add_argument("--admit-rate", default="200", help="ADMIT_RATE of the `rate` configuration")
    parser.add_argument("--admit-burst", default="200")
    parser.add_argument("--profile", default="",
                        help="py-spy's collapsed stacks of the restarted process (of each "
                             "configuration) to this file, suffixed by the configuration's name")
    parser.add_argument("--plain", action="store_true",
                        help="plain socket.io-clients retrying every 0.5 s, ignoring retry_after "
                             "(else herald.js)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting of the restarted process, in every configuration")
    parser.add_argument("--out", default="storm", help="the results file: bench/results/OUT.json")
    parser.add_argument("--settle", type=float, default=300,
                        help="seconds to wait for every client to be live again")
    args = parser.parse_args()
    configs = {"default": {}, "unbounded": UNBOUNDED,
               "rate": {"ADMIT_RATE": args.admit_rate, "ADMIT_BURST": args.admit_burst}}
    extra = dict(setting.split("=", 1) for setting in args.env)
    results = {}
    for name in args.configs.split(","):
        folder = Path(tempfile.mkdtemp(prefix="herald-storm-"))
        redis_server = RedisServer(folder)
        redis_server.start()
        client = redis_server.client()
        try:
            results[name] = storm(redis_server.url, client, folder, args.clients,
                                  dict(configs[name], **extra),
                                  interval=1 / args.rate, outage=args.outage,
                                  settle_timeout=args.settle,
                                  profile=f"{args.profile}.{name}" if args.profile else None,
                                  plain=args.plain)
        finally:
            client.close()
            redis_server.stop()
        print(json.dumps({name: results[name]}), flush=True)
    print("| configuration | all clients live again (first) | live delay p50 / p99 / max "
          "(deliveries) | peak RSS | attempts | retry-later refusals | "
          "clients with a gap or duplicate / a wrong last_id / lost again |")
    print("|---|---|---|---|---|---|---|")
    for name, result in results.items():
        print(row(name, result))
    with contextlib.suppress(OSError):
        (ROOT / "bench" / "results").mkdir(exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        (ROOT / "bench" / "results" / f"{args.out}.json").write_text(
            json.dumps({"measured_at": stamp, "args": vars(args), "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    os.environ.pop("REDIS_URL", None)  # never a developer's own Redis
    main()
