"""A client that stops reading: server memory, and a normal client's latency beside it.

Three runs of the same flood (default 10,000 notifications of ~8 KB, paced
to what the normal client reads): no stalled client; a stalled client with
the bound on (SLOW_CLIENT_MAX_QUEUE=500); a stalled client with the bound
effectively off. Reported: the web process's peak RSS growth, and the
normal client's publish-to-receive latency (python-socketio client).

    .venv/bin/python bench/slow_client.py [--flood 10000]
"""
import argparse
import time

from common import save, stack, summary  # first: it puts the project on sys.path

from app.stream.publish import Bus  # noqa: E402
from tests.support import Listener, StalledClient, rss_mb, wait_until  # noqa: E402

BLOB = "x" * 8000


def run(flood, stalled, max_queue):
    with stack(topics=("flood",), SLOW_CLIENT_MAX_QUEUE=str(max_queue)) as (
            _redis_server, client, server, _key):
        token = server.token("bench", "bench-password")
        normal = Listener(server, token)
        blocker = StalledClient(server, token, "flood") if stalled else None
        bus = Bus(client)
        pid = server.process.pid
        baseline = peak = rss_mb(pid)
        sent_at, count = {}, 0
        try:
            while count < flood:
                for _ in range(min(200, flood - count)):
                    now = time.time()
                    sent_at[bus.publish("flood.data", f"n{count}", data={"blob": BLOB})] = now
                    count += 1
                wait_until(lambda: len(normal.received) >= count - 400, timeout=60,
                           message="the normal client to keep up")
                peak = max(peak, rss_mb(pid))
            wait_until(lambda: len(normal.received) == flood, timeout=60, message="all delivered")
            peak = max(peak, rss_mb(pid))
        finally:
            if blocker:
                blocker.close()
            normal.close()
        latencies = [(arrived - sent_at[n["id"]]) * 1000
                     for n, arrived in zip(normal.received, normal.arrivals, strict=False)]
        shed = "disconnecting it" in server.log_path.read_text()
    return {"stalled_client": stalled, "max_queue": max_queue, "rss_growth_mb": peak - baseline,
            "stalled_client_disconnected": shed, "normal_latency_ms": summary(latencies)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flood", type=int, default=10_000)
    args = parser.parse_args()
    runs = [run(args.flood, False, 500), run(args.flood, True, 500),
            run(args.flood, True, 100_000_000)]
    print(f"{args.flood} notifications of ~8 KB; normal client latency in ms")
    print("stalled client   bound      RSS growth   cut off   median   p99     max")
    for r in runs:
        lat = r["normal_latency_ms"]
        bound = "off" if r["max_queue"] > 1_000_000 else str(r["max_queue"])
        print(f"{'yes' if r['stalled_client'] else 'no':16} {bound:10} {r['rss_growth_mb']:7.1f} MB"
              f"   {'yes' if r['stalled_client_disconnected'] else 'no':7}"
              f" {lat['median']:7.1f} {lat['p99']:7.1f} {lat['max']:7.1f}")
    print(f"written to {save('slow_client', {'flood': args.flood, 'runs': runs})}")


if __name__ == "__main__":
    main()
