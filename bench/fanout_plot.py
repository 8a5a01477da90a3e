"""bench/fanout.py's picture: latency against deliveries/s, one line per server
(``--plot``; bench/fanout.png)."""

LABELS = {"herald": "Herald (one process)",
          "herald-sse": "Herald, Server-Sent Events (one process)",
          "herald2": "Herald (two processes, one port)",
          "per_connection": "peer (a): a subscription per connection",
          "node": "peer (b): Node.js Socket.IO 4",
          "floor": "floor: one epoll loop, a frame built once, a send per client"}



def plot(results, clients, path):
    """Latency (p50 and p99) against deliveries/s, one line per server, log scales."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(8, 5), dpi=110)
    for kind, result in results.items():
        runs = sorted(result["rates"], key=lambda r: r["deliveries_per_s"])
        rates = [r["deliveries_per_s"] for r in runs]
        line, = axes.plot(rates, [r["p99_ms"] for r in runs], marker="o", label=f"{LABELS[kind]}, p99")
        axes.plot(rates, [r["p50_ms"] for r in runs], marker=".", linestyle="--",
                  color=line.get_color(), label=f"{LABELS[kind]}, p50")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel(f"deliveries per second ({clients} websocket clients)")
    axes.set_ylabel("publish-to-client latency (ms)")
    axes.set_title("Fan-out: latency against delivery rate (2 cores, one run)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
