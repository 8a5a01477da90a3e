"""What ``make bench-compare`` runs (bin/bench_compare.py): each bench's command,
its results file and the figures read from it, each with the floor it is held to.

A floor is the same work done by the least code that could do it (bench/peers/:
``floor.py`` for the fan-out, ``rest_floor.py`` for a REST publish,
``minimal_relay.py`` for publish-to-browser and a bare websocket handshake;
``plain_socketio.py``, a reference beside the reconnect's floor: python-socketio's
own share of a reconnect),
measured by the same bench in the same run as Herald, so the ratio Herald /
floor is the machine's noise cancelled: docs/capacity.md sets the goals on it.
``floor_args`` are added to the command only where this tree's harness runs it
(an older REF's own harness, ``--ref-harness``, knows no floors).
"""
from collections import namedtuple

# label, path in the results JSON, "lower"/"higher"/"reference" is better, scale to
# the unit shown, and the path of its floor in the same JSON (None: it has none).
Figure = namedtuple("Figure", "label path better scale floor", defaults=(1, None))
Bench = namedtuple("Bench", "command results figures floor_args", defaults=((),))


def _storm_at_20(out, clients, *extra):
    """Issue 24's storm: 5,000 ``clients`` at 20 notifications/s (100,000 deliveries/s),
    its results in bench/results/``out``.json."""
    label = f"storm ({clients}, 20/s)"
    return Bench(["bench/storm.py", "--clients", "5000", "--rate", "20", "--configs", "default",
                  *extra, "--out", out], out, [
        Figure(f"{label}: all clients back (s)", ("results", "default", "all_back_ms"), "lower", 1e-3),
        Figure(f"{label}: live delay p99 (ms)", ("results", "default", "storm_live_p99_ms"), "lower"),
        Figure(f"{label}: peak RSS (MB)", ("results", "default", "peak_rss_mb"), "lower"),
        Figure(f"{label}: steady RSS before the kill (MB)", ("results", "default", "steady_rss_mb"),
               "lower"),
    ])


def _fanout_rate(index, rate):
    """CPU per delivery and p99 at ``rate`` (the ``index``-th of --rates), the CPU
    held to the floor server's in the same run."""
    at = ("rates", index)
    return [Figure(f"fanout {rate}/s: CPU per delivery (µs)",
                   ("results", "herald", *at, "cpu_us_per_delivery"), "lower",
                   floor=("results", "floor", *at, "cpu_us_per_delivery")),
            Figure(f"fanout {rate}/s: p99 (ms)", ("results", "herald", *at, "p99_ms"), "lower")]


BENCHES = {
    "storm": Bench(["bench/storm.py", "--clients", "5000", "--configs", "default"], "storm", [
        Figure("storm (5,000 herald.js): all clients back (s)", ("results", "default", "all_back_ms"),
               "lower", 1e-3),
        Figure("storm (5,000 herald.js): live delay p99 (ms)",
               ("results", "default", "storm_live_p99_ms"), "lower"),
        Figure("storm (5,000 herald.js): peak RSS (MB)", ("results", "default", "peak_rss_mb"), "lower"),
        Figure("storm (5,000 herald.js): retry-later refusals", ("results", "default", "busy_refusals"),
               "lower"),
    ]),
    "storm-plain": Bench(["bench/storm.py", "--clients", "2000", "--rate", "20", "--configs",
                          "default", "--plain", "--out", "storm-plain"], "storm-plain", [
        Figure("storm (2,000 plain, 20/s): all clients back (s)",
               ("results", "default", "all_back_ms"), "lower", 1e-3),
        Figure("storm (2,000 plain, 20/s): worst live delay (ms)",
               ("results", "default", "storm_live_max_ms"), "lower"),
        Figure("storm (2,000 plain, 20/s): peak RSS (MB)", ("results", "default", "peak_rss_mb"),
               "lower"),
    ]),
    "storm-20": _storm_at_20("storm-20", "5,000 herald.js"),
    "storm-plain-5k": _storm_at_20("storm-plain-5k", "5,000 plain", "--plain"),
    "fanout": Bench(["bench/fanout.py", "--servers", "herald", "--clients", "1000", "--rates",
                     "20,100,400", "--seconds", "5", "--idle", "5000"], "fanout", [
        *_fanout_rate(0, "20k"), *_fanout_rate(1, "100k"), *_fanout_rate(2, "400k"),
        Figure("memory per idle connection (KiB)",
               ("results", "herald", "memory", "kib_per_connection"), "lower"),
    ], floor_args=("--servers", "herald,floor")),
    "sse": Bench(["bench/fanout.py", "--servers", "herald-sse", "--clients", "1000", "--rates",
                  "20,100", "--seconds", "5", "--idle", "0"], "fanout", [
        Figure("SSE 20k/s: CPU per delivery (µs)",
               ("results", "herald-sse", "rates", 0, "cpu_us_per_delivery"), "lower"),
        Figure("SSE 100k/s: CPU per delivery (µs)",
               ("results", "herald-sse", "rates", 1, "cpu_us_per_delivery"), "lower"),
        Figure("SSE 100k/s: p99 (ms)", ("results", "herald-sse", "rates", 1, "p99_ms"), "lower"),
    ]),
    "bridge": Bench(["bench/bridge.py", "--count", "50000"], "bridge", [
        Figure("bridge fire-and-forget (/s)", ("fire_and_forget_per_s",), "higher"),
        Figure("bridge confirmed, 256 in flight (/s)", ("confirmed_pipelined_per_s",), "higher"),
        Figure("raw PUSH/PULL, the machine's own pace (/s)", ("raw_push_pull_per_s",), "reference"),
    ]),
    "rest": Bench(["bench/rest_publish.py", "--clients", "8", "--seconds", "5"], "rest_publish", [
        Figure("REST publishes a second (8 publishers)", ("publishes_per_s",), "higher",
               floor=("floor", "publishes_per_s")),
        Figure("REST publish: server CPU per publish (µs)", ("server_cpu_us_per_publish",), "lower",
               floor=("floor", "server_cpu_us_per_publish")),
    ]),
    "edit": Bench(["bench/edit_latency.py", "--count", "1000", "--gap", "50"], "edit_latency", [
        Figure("edit-to-other-browser, example board, median (ms)", ("latency_ms", "median"), "lower"),
        Figure("edit-to-other-browser, example board, p99 (ms)", ("latency_ms", "p99"), "lower"),
    ]),
    "latency": Bench(["bench/browser_latency.py", "--count", "1000", "--gap", "50"],
                     "browser_latency", [
        Figure("publish-to-browser median (ms)", ("latency_ms", "median"), "lower",
               floor=("floor", "latency_ms", "median")),
        Figure("publish-to-browser p99 (ms)", ("latency_ms", "p99"), "lower",
               floor=("floor", "latency_ms", "p99")),
        Figure("REST publish call median (ms)", ("rest_publish_ms", "median"), "lower"),
        Figure("publish-to-browser: the browser's CPU per notification (ms)", ("page_cpu_ms",),
               "lower", floor=("floor", "page_cpu_ms")),
    ]),
    "reconnect": Bench(["bench/reconnect.py"], "reconnect", [
        Figure("reconnect (token, subscribe, replay of ~20): server CPU (µs)",
               ("server_cpu_us_per_reconnect",), "lower",
               floor=("floor", "server_cpu_us_per_handshake")),
        Figure("reconnect: median (ms)", ("reconnect_ms", "median"), "lower",
               floor=("floor", "handshake_ms", "median")),
        Figure("python-socketio alone, the same replay (no token, no Redis): server CPU (µs)",
               ("library", "server_cpu_us_per_reconnect"), "reference",
               floor=("floor", "server_cpu_us_per_handshake")),
        Figure("python-socketio and one Redis trip (three reads), the same replay: server CPU (µs)",
               ("library_redis", "server_cpu_us_per_reconnect"), "reference",
               floor=("floor", "server_cpu_us_per_handshake")),
    ]),
}
