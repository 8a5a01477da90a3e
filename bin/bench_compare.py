"""``make bench-compare REF=<git ref>``: the hot path's figures on this tree and on REF,
measured back to back on this machine, and their ratios.

Herald once got 3x slower in a reconnect storm and twice as heavy in two days,
unnoticed: figures measured on different days, or on a busy machine, could not
show it. This runs each bench on REF and on the working tree in turns (REF,
then this tree, then again for ``--rounds``), so both meet the same machine,
and prints every figure with the ratio this tree / REF, marked when it moved
the wrong way by more than ``--tolerance``.

REF is checked out into a git worktree under ``var/bench-compare/`` with this
tree's ``.venv`` and ``node_modules``. Both sides run this tree's harness
(``bench/``, tests/support.py, and the Redis-side helpers it imports: users,
subscriptions, publishing), which starts REF's own web server and workers
(``HERALD_SERVER_ROOT``), so that only the code under test differs, even
across a change of layout (c573371 predates app/stream/). The harness may
have learnt a setting since REF; an older REF ignores settings it does not
know. A REF from before key layout 2 (app/key_layout.py) reads its users and
subscriptions under names this tree's helpers no longer write: ``--ref-harness``
runs its side with its own harness instead. The benches (each writes
bench/results/<name>.json, read back here):

- ``storm``: 5,000 herald.js clients, a web process killed and restarted
  (bench/storm.py);
- ``storm-plain``: the same with 2,000 plain socket.io-clients that retry every
  0.5 s and ignore retry_after, 20 notifications/s (FINDINGS' harness);
- ``storm-20``, ``storm-plain-5k``: issue 24's targets, 5,000 clients of each
  kind at 20 notifications/s (100,000 live deliveries a second): every client
  back, live delay, and the restarted process's peak against the steady RSS;
- ``fanout``: 1,000 clients at 100k and 400k deliveries/s, and the memory of
  5,000 idle connections (bench/fanout.py);
- ``sse``: the same fan-out to 1,000 Server-Sent Events streams at 20k and
  100k deliveries/s;
- ``bridge``: ZeroMQ ingest, fire-and-forget and confirmed (bench/bridge.py);
- ``rest``: REST publishes a second into one web process, 8 keep-alive
  publishers (bench/rest_publish.py);
- ``latency``: publish-to-browser, one at a time (bench/browser_latency.py).

    make bench-compare REF=main~3
    .venv/bin/python bin/bench_compare.py --ref 427672b --rounds 2 --only fanout,bridge
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent



def _storm_at_20(out, clients, *extra):
    """Issue 24's storm: 5,000 ``clients`` at 20 notifications/s (100,000 deliveries/s),
    its results in bench/results/``out``.json."""
    command = ["bench/storm.py", "--clients", "5000", "--rate", "20", "--configs", "default",
               *extra, "--out", out]
    label = f"storm ({clients}, 20/s)"
    return command, out, [
        (f"{label}: all clients back (s)", ("results", "default", "all_back_ms"), "lower", 1e-3),
        (f"{label}: live delay p99 (ms)", ("results", "default", "storm_live_p99_ms"), "lower", 1),
        (f"{label}: peak RSS (MB)", ("results", "default", "peak_rss_mb"), "lower", 1),
        (f"{label}: steady RSS before the kill (MB)", ("results", "default", "steady_rss_mb"),
         "lower", 1),
    ]


# name -> (command after the interpreter, results file, [(figure, path in the JSON, better)])
BENCHES = {
    "storm": (["bench/storm.py", "--clients", "5000", "--configs", "default"], "storm", [
        ("storm (5,000 herald.js): all clients back (s)", ("results", "default", "all_back_ms"),
         "lower", 1e-3),
        ("storm (5,000 herald.js): live delay p99 (ms)",
         ("results", "default", "storm_live_p99_ms"), "lower", 1),
        ("storm (5,000 herald.js): peak RSS (MB)", ("results", "default", "peak_rss_mb"), "lower", 1),
        ("storm (5,000 herald.js): retry-later refusals", ("results", "default", "busy_refusals"),
         "lower", 1),
    ]),
    "storm-plain": (["bench/storm.py", "--clients", "2000", "--rate", "20", "--configs", "default",
                     "--plain", "--out", "storm-plain"], "storm-plain", [
        ("storm (2,000 plain, 20/s): all clients back (s)", ("results", "default", "all_back_ms"),
         "lower", 1e-3),
        ("storm (2,000 plain, 20/s): worst live delay (ms)",
         ("results", "default", "storm_live_max_ms"), "lower", 1),
        ("storm (2,000 plain, 20/s): peak RSS (MB)", ("results", "default", "peak_rss_mb"),
         "lower", 1),
    ]),
    "storm-20": _storm_at_20("storm-20", "5,000 herald.js"),
    "storm-plain-5k": _storm_at_20("storm-plain-5k", "5,000 plain", "--plain"),
    "fanout": (["bench/fanout.py", "--servers", "herald", "--clients", "1000", "--rates", "100,400",
                "--seconds", "5", "--idle", "5000"], "fanout", [
        ("fanout 100k/s: CPU per delivery (µs)",
         ("results", "herald", "rates", 0, "cpu_us_per_delivery"), "lower", 1),
        ("fanout 100k/s: p99 (ms)", ("results", "herald", "rates", 0, "p99_ms"), "lower", 1),
        ("fanout 400k/s: CPU per delivery (µs)",
         ("results", "herald", "rates", 1, "cpu_us_per_delivery"), "lower", 1),
        ("fanout 400k/s: p99 (ms)", ("results", "herald", "rates", 1, "p99_ms"), "lower", 1),
        ("memory per idle connection (KiB)",
         ("results", "herald", "memory", "kib_per_connection"), "lower", 1),
    ]),
    "sse": (["bench/fanout.py", "--servers", "herald-sse", "--clients", "1000", "--rates",
             "20,100", "--seconds", "5", "--idle", "0"], "fanout", [
        ("SSE 20k/s: CPU per delivery (µs)",
         ("results", "herald-sse", "rates", 0, "cpu_us_per_delivery"), "lower", 1),
        ("SSE 100k/s: CPU per delivery (µs)",
         ("results", "herald-sse", "rates", 1, "cpu_us_per_delivery"), "lower", 1),
        ("SSE 100k/s: p99 (ms)", ("results", "herald-sse", "rates", 1, "p99_ms"), "lower", 1),
    ]),
    "bridge": (["bench/bridge.py", "--count", "50000"], "bridge", [
        ("bridge fire-and-forget (/s)", ("fire_and_forget_per_s",), "higher", 1),
        ("bridge confirmed, 256 in flight (/s)", ("confirmed_pipelined_per_s",), "higher", 1),
        ("raw PUSH/PULL, the machine's own pace (/s)", ("raw_push_pull_per_s",), "reference", 1),
    ]),
    "rest": (["bench/rest_publish.py", "--clients", "8", "--seconds", "5"], "rest_publish", [
        ("REST publishes a second (8 publishers)", ("publishes_per_s",), "higher", 1),
        ("REST publish: server CPU per publish (µs)", ("server_cpu_us_per_publish",), "lower", 1),
    ]),
    "edit": (["bench/edit_latency.py", "--count", "100", "--gap", "50"], "edit_latency", [
        ("edit-to-other-browser, example board, median (ms)", ("latency_ms", "median"), "lower", 1),
        ("edit-to-other-browser, example board, p99 (ms)", ("latency_ms", "p99"), "lower", 1),
    ]),
    "latency": (["bench/browser_latency.py", "--count", "100", "--gap", "50"], "browser_latency", [
        ("publish-to-browser median (ms)", ("latency_ms", "median"), "lower", 1),
        ("publish-to-browser p99 (ms)", ("latency_ms", "p99"), "lower", 1),
        ("REST publish call median (ms)", ("rest_publish_ms", "median"), "lower", 1),
    ]),
}


def git(*args, cwd=ROOT):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def checkout(ref):
    """A worktree of ``ref`` that runs with this tree's environment and harness."""
    sha = git("rev-parse", "--verify", f"{ref}^{{commit}}")
    tree = ROOT / "var" / "bench-compare" / sha[:12]
    if not tree.exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        git("worktree", "add", "--detach", str(tree), sha)
    for shared in (".venv", "node_modules"):
        if not (tree / shared).exists():
            (tree / shared).symlink_to(ROOT / shared)
    return sha, tree


def run(tree, name, log, harness=ROOT):
    """Run bench ``name`` in ``tree``, with ``harness``'s bench/ and test helpers; its
    results JSON, or None when it failed."""
    command, results, _figures = BENCHES[name]
    path = harness / "bench" / "results" / f"{results}.json"
    path.unlink(missing_ok=True)
    started = time.monotonic()
    with open(log, "a") as out:
        out.write(f"\n=== {tree} {name}: {' '.join(command)}\n")
        out.flush()
        # This tree's harness (and its Redis-side helpers), ``tree``'s server and workers
        # (tests/support.py starts them from HERALD_SERVER_ROOT; storm.js takes its herald.js).
        # (Set for the child by env(1): only app/settings reads the environment here.)
        done = subprocess.run(["env", f"HERALD_SERVER_ROOT={tree}",
                               str(ROOT / ".venv" / "bin" / "python"), *command], cwd=harness,
                              stdout=out, stderr=subprocess.STDOUT, timeout=1800)
    print(f"  {name} on {tree.name if tree != ROOT else 'this tree'}: "
          f"{time.monotonic() - started:.0f} s{'' if done.returncode == 0 else ' (FAILED)'}",
          flush=True)
    return json.loads(path.read_text()) if done.returncode == 0 and path.exists() else None


def figure(result, path, scale):
    try:
        for step in path:
            result = result[step]
        return float(result) * scale
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def table(measured, tolerance):
    """Markdown rows: figure, REF, this tree, ratio, and a mark when it got worse."""
    rows = ["| figure | REF | this tree | this / REF |", "|---|---|---|---|"]
    worse = 0
    for name, (_command, _results, figures) in BENCHES.items():
        if name not in measured:
            continue
        for label, path, better, scale in figures:
            values = {side: [v for r in measured[name][side] if (v := figure(r, path, scale)) is not None]
                      for side in ("ref", "head")}
            if not values["ref"] or not values["head"]:
                rows.append(f"| {label} | {values['ref'] or 'failed'} | {values['head'] or 'failed'} | |")
                continue
            ref, head = statistics.median(values["ref"]), statistics.median(values["head"])
            ratio = head / ref if ref else (1.0 if not head else float("inf"))  # 0 and 0: the same
            bad = (ratio > 1 + tolerance if better == "lower" else ratio < 1 - tolerance
                   if better == "higher" else False)  # "reference": the machine, not Herald
            worse += bad
            shown = lambda vs: ", ".join(f"{v:,.1f}" for v in vs)  # noqa: E731
            rows.append(f"| {label} | {shown(values['ref'])} | {shown(values['head'])} | "
                        f"{ratio:.2f}{' **worse**' if bad else ''} |")
    return rows, worse


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", required=True, help="the git ref to compare with")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each bench on each side")
    parser.add_argument("--only", default=",".join(BENCHES), help="benches to run, comma-separated")
    parser.add_argument("--tolerance", type=float, default=0.10,
                        help="a ratio this far the wrong way is marked worse")
    parser.add_argument("--ref-harness", action="store_true",
                        help="run REF's side with REF's own bench/ and test helpers: for a REF "
                             "whose Redis keys this tree's helpers no longer write where it "
                             "reads them (a REF before key layout 2, app/key_layout.py)")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    unknown = sorted(set(names) - set(BENCHES))
    if unknown:
        sys.exit(f"--only: unknown bench {unknown[0]} (choose from {', '.join(BENCHES)})")
    sha, ref_tree = checkout(args.ref)
    head = git("rev-parse", "--short", "HEAD") + (" + changes" if git("status", "--porcelain",
                                                                     "--untracked-files=no") else "")
    log = ROOT / "var" / "bench-compare" / "last.log"
    log.write_text("")
    print(f"REF {args.ref} ({sha[:12]}) against this tree ({head}); output in {log}", flush=True)
    measured = {}
    for name in names:
        measured[name] = {"ref": [], "head": []}
        for _ in range(args.rounds):
            for side, tree in (("ref", ref_tree), ("head", ROOT)):
                result = run(tree, name, log, tree if args.ref_harness else ROOT)
                if result is not None:
                    measured[name][side].append(result)
    rows, worse = table(measured, args.tolerance)
    print(f"\nREF {args.ref} ({sha[:12]}) / this tree ({head}), {args.rounds} round(s), "
          f"medians of the runs shown:")
    print("\n".join(rows))
    if worse:
        print(f"\n{worse} figure(s) moved the wrong way by more than {args.tolerance:.0%}: "
              "a bug to fix or a cost to justify (the raw PUSH/PULL row is the machine's own "
              "pace in the same run: when it moved too, suspect the machine).")


if __name__ == "__main__":
    main()
