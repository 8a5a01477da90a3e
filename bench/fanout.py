"""Fan-out at scale: Herald beside its peers, in one run, under the same load.

For each server (Herald, one process; ``herald-sse``, the same with its
clients on Server-Sent Events (GET /api/stream) instead of Socket.IO;
``herald2``, two Herald processes sharing the port; peer (a), a Redis subscription per connection,
bench/peers/per_connection.py; peer (b), Node.js Socket.IO 4 relaying Redis
pub/sub, bench/peers/node/server.js; ``floor``, the least a relay must do: one
epoll loop, each frame built once, one non-blocking send per client,
bench/peers/floor.py), on a fresh redis-server:

- ``--clients`` websocket clients from Node load generators (``--loadgens``
  separate processes of bench/loadgen.js, 2 by default, so that one
  saturated load generator does not set the latency measured), subscribed
  to ``bench``;
- for each publish rate in ``--rates`` (notifications/s, each with its
  publish time in ``data.t``), ``--seconds`` of steady publishing; reported:
  deliveries/s, p50/p99/max publish-to-client latency, server CPU (share of
  one core);
- first, on the fresh server: its memory per idle connection, the RSS
  growth over ``--idle`` connections divided by their number.

Ratios against the peers come from the same run, so machine noise cancels. With
``floor`` among the servers, Herald's CPU per delivery is printed as a ratio to the
floor's at each rate (``floor_ratio`` in the JSON, in Herald's rates).

Over loopback, a TCP segment is received (the client side's TCP and its wake-up) in
the context of whoever makes it go out. A server with TCP_NODELAY (Herald since
8ffd9e5, Node's ``ws``, the floor) sends a segment per frame and pays for its
clients' receiving at every send; one with Nagle's algorithm (c573371) holds what a
client has not acknowledged yet, so at 100k/s and up its segments are fewer and
bigger (less work on both sides, later: p50 at 400k/s ~1.7x) and many go out when a
client's ACK comes in, charged to the client. The server's own CPU per delivery
moves with that socket option alone; ``with_clients_cpu_us_per_delivery`` counts both together.

    .venv/bin/python bench/fanout.py [--servers herald,herald2,per_connection,node,floor]
        [--clients 1000] [--rates 20,50,100,150] [--seconds 5] [--idle 5000]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, save  # first: it puts the project on sys.path

from app.stream.publish import Bus  # noqa: E402
from app.users import accounts, subscriptions  # noqa: E402
from tests.support import LiveServer, RedisServer, cpu_seconds, free_port, rss_mb  # noqa: E402

NODE_PEER = ROOT / "bench" / "peers" / "node"


def rss_total(pids):
    return sum(rss_mb(pid) for pid in pids)


class HeraldProcesses:
    """``count`` Herald web processes sharing one port (SO_REUSEPORT), as
    ``WEB_PROCESSES=N make run`` runs them; the kernel spreads the clients."""

    def __init__(self, redis_url, folder, count):
        port = free_port()
        # Every load generator connects from 127.0.0.1: no per-address cap here.
        self.servers = [LiveServer(redis_url, folder, port=port, REUSE_PORT="1",
                                   MAX_CONNECTIONS_PER_ADDRESS="0", MAX_SESSIONS_PER_ADDRESS="0")
               for _ in range(count)]
        self.url = self.servers[0].url

    def start(self):
        for server in self.servers:
            server.start()

    def stop(self):
        for server in self.servers:
            server.stop()

    def pids(self):
        return [server.process.pid for server in self.servers]


class Peer:
    """A peer server on its own port, on ``redis_url``."""

    def __init__(self, kind, redis_url, folder):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, REDIS_URL=redis_url, PORT=str(self.port))
        command = ([sys.executable, f"bench/peers/{kind}.py"] if kind in ("per_connection", "floor")
                   else ["node", str(NODE_PEER / "server.js")])
        self.log = open(Path(folder) / f"{kind}.log", "wb")
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                        stderr=self.log)
        line = self.process.stdout.readline().decode().strip()
        if line != "listening":
            raise SystemExit(f"{kind} did not start: {line!r}")

    def stop(self):
        self.process.terminate()
        self.process.wait(15)
        self.process.stdout.close()
        self.log.close()


def start_server(kind, redis_server, folder):
    """The server under test, and the process ids whose CPU and memory are its."""
    if kind.startswith("herald"):
        server = HeraldProcesses(redis_server.url, folder, HERALD_PROCESSES[kind])
        server.start()
        return server, server.pids()
    peer = Peer(kind, redis_server.url, folder)
    return peer, [peer.process.pid]


class LoadGenerators:
    """``count`` Node load generator processes (bench/loadgen.js) sharing ``clients``
    between them, so that no single one saturates a core before the server does."""

    def __init__(self, url, token, clients, count, seconds=None, idle=False, sse=False):
        shares = [clients // count + (1 if n < clients % count else 0) for n in range(count)]
        self.processes = []
        self.ready = 0
        for share in filter(None, shares):
            command = ["node", "bench/loadgen.js", "--url", url, "--token", token,
                       "--clients", str(share)]
            command += ["--idle"] if idle else ["--seconds", str(seconds)]
            command += ["--sse"] if sse else []
            self.processes.append(subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE,
                                                   stderr=subprocess.PIPE, text=True))
        for process in self.processes:  # each says "ready N" once its clients are subscribed
            ready = process.stderr.readline().split()
            if not ready or ready[0] != "ready":
                self.stop()
                raise SystemExit(f"load generator failed: {ready} {process.stderr.read()[-500:]}")
            self.ready += int(ready[1])

    def pids(self):
        return [process.pid for process in self.processes]

    def results(self, timeout):
        """Their reports merged: total deliveries, percentiles over all latencies."""
        reports = [json.loads(process.communicate(timeout=timeout)[0]) for process in self.processes]
        histogram = {}
        for report in reports:
            for ms, count in report["histogram"].items():
                histogram[int(ms)] = histogram.get(int(ms), 0) + count
        deliveries = sum(report["deliveries"] for report in reports)
        maxima = [report["max_ms"] for report in reports if report["max_ms"] is not None]
        return {"deliveries": deliveries,
                "p50_ms": percentile(histogram, deliveries, 0.5),
                "p99_ms": percentile(histogram, deliveries, 0.99),
                "max_ms": max(maxima) if maxima else None,
                "fewest_per_client": min(report["fewest_per_client"] for report in reports)}

    def stop(self):
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.communicate(timeout=60)


def percentile(histogram, total, fraction):
    """The whole-millisecond latency below which ``fraction`` of ``total`` fall."""
    seen = 0
    for ms in sorted(histogram):
        seen += histogram[ms]
        if seen > fraction * (total - 1):
            return ms
    return None


def publish_steadily(bus, rate, seconds):
    published, started = 0, time.time()
    while time.time() - started < seconds:
        bus.publish("bench.tick", "tick", data={"t": time.time() * 1000})
        published += 1
        time.sleep(max(0.0, started + published / rate - time.time()))
    return published


def run_rate(kind, url, token, pids, bus, args, rate):
    clients, seconds = args.clients, args.seconds
    generators = LoadGenerators(url, token, clients, args.loadgens, seconds + 1,
                                sse=kind.endswith("-sse"))
    cpu_before, wall_before = cpu_seconds(pids), time.time()
    loadgen_before = cpu_seconds(generators.pids())
    published = publish_steadily(bus, rate, seconds)
    wall = time.time() - wall_before
    cpu = (cpu_seconds(pids) - cpu_before) / wall
    loadgen_cpu = (cpu_seconds(generators.pids()) - loadgen_before) / wall
    result = generators.results(timeout=seconds + 60)
    # Deliveries over the publishing window (the load generators listen one
    # second longer, so that what was published last is counted too).
    result.update(server=kind, rate=rate, published=published, connected=generators.ready,
                  server_cpu_share=cpu, loadgen_cpu_share=loadgen_cpu, expected_per_s=rate * clients,
                  deliveries_per_s=result["deliveries"] / seconds)
    result["cpu_us_per_delivery"] = (cpu * 1e6 / result["deliveries_per_s"]
                                     if result["deliveries_per_s"] else None)
    # The server's and the load generators' CPU together: over loopback, where a TCP
    # segment's receiving is charged depends on the sender's TCP_NODELAY (see the module).
    result["with_clients_cpu_us_per_delivery"] = ((cpu + loadgen_cpu) * 1e6 / result["deliveries_per_s"]
                                                  if result["deliveries_per_s"] else None)
    return result


def idle_memory(kind, url, token, pids, count, loadgens):
    before = rss_total(pids)
    generators = LoadGenerators(url, token, count, loadgens, idle=True, sse=kind.endswith("-sse"))
    time.sleep(2)
    after = rss_total(pids)
    generators.stop()
    return {"server": kind, "idle_connections": generators.ready,
            "kib_per_connection": (after - before) * 1024 / max(generators.ready, 1)}


def measure(kind, args):
    folder = Path(tempfile.mkdtemp(prefix=f"herald-fanout-{kind}-"))
    redis_server = RedisServer(folder)
    redis_server.start()
    client = redis_server.client()
    client.config_set("appendonly", "no")  # same for every server: no fsync in the way
    accounts.create_user(client, "bench", "bench-password")
    subscriptions.add(client, "bench", ["bench"], limit=10)  # what an event stream follows
    server, pids = start_server(kind, redis_server, folder)
    try:
        token = (LiveServer.token(server, "bench", "bench-password") if kind.startswith("herald")
                 else "any")
        bus = Bus(client)
        # Memory first, on the fresh server: after the load runs a garbage-collected
        # runtime (Node) may hand memory back while we measure.
        memory = idle_memory(kind, server.url, token, pids, args.idle, args.loadgens) if args.idle else None
        rates = [run_rate(kind, server.url, token, pids, bus, args, rate)
                 for rate in args.rates]
    finally:
        server.stop()
        client.close()
        redis_server.stop()
    return {"rates": rates, "memory": memory}


HERALD_PROCESSES = {"herald": 1, "herald2": 2, "herald-sse": 1}
def floor_ratios(results):
    """Herald's CPU per delivery over the floor's, rate by rate (same rates, same run),
    printed and stored as ``floor_ratio`` in Herald's rates; with the load generators'
    CPU counted in on both sides, ``floor_ratio_with_clients``."""
    floor = {r["rate"]: r for r in results["floor"]["rates"]}
    cells = []
    for run in results["herald"]["rates"]:
        base = floor.get(run["rate"], {})
        for field, name in (("cpu_us_per_delivery", "floor_ratio"),
                            ("with_clients_cpu_us_per_delivery", "floor_ratio_with_clients")):
            run[name] = (run[field] / base[field] if base.get(field) and run[field] else None)
        cells.append(f"{run['rate']}/s: {run['cpu_us_per_delivery'] or 0:.1f} / "
                     f"{base.get('cpu_us_per_delivery') or 0:.1f} µs = {run['floor_ratio'] or 0:.2f}x "
                     f"({run['floor_ratio_with_clients'] or 0:.2f}x with the clients' CPU)")
    print("  Herald's CPU per delivery / the floor's: " + ",  ".join(cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", default="herald,herald2,per_connection,node")
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--rates", default="20,50,100,150")
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--idle", type=int, default=5000)
    parser.add_argument("--loadgens", type=int, default=2,
                        help="load generator processes sharing the clients")
    parser.add_argument("--plot", help="write the latency/rate plot here (PNG)")
    args = parser.parse_args()
    args.rates = [int(r) for r in args.rates.split(",")]
    if not (NODE_PEER / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                       cwd=NODE_PEER, check=True)
    results = {kind: measure(kind, args) for kind in args.servers.split(",")}
    print(f"{args.clients} clients, {args.seconds:g} s per rate; "
          "deliveries/s (p50 / p99 ms, server CPU = per delivery, load generator CPU)")
    for kind, result in results.items():
        cells = [f"{r['deliveries_per_s']:>9,.0f} ({r['p50_ms'] or 0:.0f}/{r['p99_ms'] or 0:.0f} ms, "
                 f"{r['server_cpu_share']:.0%} = {r['cpu_us_per_delivery'] or 0:.1f} µs/delivery, "
                 f"{r['loadgen_cpu_share']:.0%})" for r in result["rates"]]
        memory = result["memory"]
        print(f"  {kind:15}" + "  ".join(cells) +
              (f"   {memory['kib_per_connection']:.1f} KiB/idle conn" if memory else ""))
    if "herald" in results and "floor" in results:
        floor_ratios(results)
    best = {kind: max(r["deliveries_per_s"] for r in result["rates"]) for kind, result in results.items()}
    if "herald" in best:
        for kind in best:
            if kind == "herald2":
                print(f"  two Herald processes' best / one's: {best['herald2'] / best['herald']:.2f}x")
            elif kind != "herald":
                print(f"  Herald's best / {kind}'s best: {best['herald'] / best[kind]:.2f}x")
    if args.plot:
        from fanout_plot import plot
        plot(results, args.clients, args.plot)
        print(f"plot written to {args.plot}")
    print(f"written to {save('fanout', {'clients': args.clients, 'results': results})}")


if __name__ == "__main__":
    main()
