"""``make bench-compare REF=<git ref>``: the hot path's figures on this tree and on REF,
measured back to back on this machine, and their ratios.

Herald once got 3x slower in a reconnect storm and twice as heavy in two days,
unnoticed: figures measured on different days, or on a busy machine, could not
show it. This runs each bench on REF and on the working tree in turns (REF,
then this tree, then again for ``--rounds``), so both meet the same machine,
and prints every figure with the ratio this tree / REF, marked when it moved
by more than ``--tolerance`` and by more than the spread between its rounds
(3 by default: a change smaller than the noise is not a change), and beside
it the floor the same bench measured in the same run (bench/compare_benches.py)
with the ratio this tree / floor, which docs/capacity.md sets goals on.

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
- ``fanout``: 1,000 clients at 20k, 100k and 400k deliveries/s beside the floor
  server (bench/peers/floor.py), and the memory of 5,000 idle connections
  (bench/fanout.py);
- ``sse``: the same fan-out to 1,000 Server-Sent Events streams at 20k and
  100k deliveries/s;
- ``bridge``: ZeroMQ ingest, fire-and-forget and confirmed (bench/bridge.py);
- ``rest``: REST publishes a second into one web process, 8 keep-alive
  publishers, beside a minimal gevent endpoint with the same key check and
  script (bench/rest_publish.py);
- ``edit``: one user's edit on the example board to another user's page;
- ``latency``: publish-to-browser, one at a time, 1,000 of them, beside a
  minimal relay (bench/browser_latency.py);
- ``reconnect``: a client's reconnect (token, subscribe, replay) beside a bare
  websocket handshake (bench/reconnect.py).

    make bench-compare REF=main~3
    .venv/bin/python bin/bench_compare.py --ref 427672b --rounds 3 --only fanout,rest,latency,reconnect
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from compare_benches import BENCHES  # noqa: E402


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
    bench = BENCHES[name]
    command = [*bench.command, *(bench.floor_args if harness == ROOT else ())]
    path = harness / "bench" / "results" / f"{bench.results}.json"
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


def spread(values):
    """How far apart the runs of one side landed: (max - min) / median, 0 for one run."""
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if len(values) > 1 and middle else 0.0


def verdict(ratio, better, noise):
    """``worse``/``better`` when the ratio moved past ``noise`` (the tolerance, or the
    spread between rounds when that is wider), else ``""``: a change smaller than the
    spread is not a change."""
    if better == "reference" or abs(ratio - 1) <= noise:
        return ""
    return "worse" if (ratio > 1) == (better == "lower") else "better"


def table(measured, tolerance):
    """Markdown rows: figure, each side's runs, the spread, this / REF (marked only past
    the spread), and the floor measured beside this tree with this / floor; the count of
    figures that got worse."""
    rows = ["| figure | REF | this tree | spread | this / REF | floor | this / floor |",
            "|---|---|---|---|---|---|---|"]
    worse = 0
    shown = lambda vs: ", ".join(f"{v:,.1f}" for v in vs)  # noqa: E731
    for name, bench in BENCHES.items():
        if name not in measured:
            continue
        for fig in bench.figures:
            values = {side: [v for r in measured[name][side]
                             if (v := figure(r, fig.path, fig.scale)) is not None]
                      for side in ("ref", "head")}
            floors = [v for r in measured[name]["head"]
                      if fig.floor and (v := figure(r, fig.floor, fig.scale)) is not None]
            head = statistics.median(values["head"]) if values["head"] else None
            floor_cells = (f"{shown(floors)} | {head / statistics.median(floors):.2f}"
                           if floors and head is not None and statistics.median(floors) else " | ")
            if not values["ref"] or not values["head"]:
                rows.append(f"| {fig.label} | {shown(values['ref']) or 'failed'} | "
                            f"{shown(values['head']) or 'failed'} | | | {floor_cells} |")
                continue
            ref = statistics.median(values["ref"])
            ratio = head / ref if ref else (1.0 if not head else float("inf"))  # 0 and 0: the same
            noise = max(spread(values["ref"]), spread(values["head"]))
            moved = verdict(ratio, fig.better, max(tolerance, noise))
            worse += moved == "worse"
            rows.append(f"| {fig.label} | {shown(values['ref'])} | {shown(values['head'])} | "
                        f"±{noise / 2:.0%} | {ratio:.2f}{f' **{moved}**' if moved else ''} | "
                        f"{floor_cells} |")
    return rows, worse


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", required=True, help="the git ref to compare with")
    parser.add_argument("--rounds", type=int, default=3,
                        help="runs of each bench on each side (3: a spread to judge a change by)")
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
        print(f"\n{worse} figure(s) moved the wrong way by more than {args.tolerance:.0%} and "
              "by more than the spread between rounds: "
              "a bug to fix or a cost to justify (the raw PUSH/PULL row is the machine's own "
              "pace in the same run: when it moved too, suspect the machine).")


if __name__ == "__main__":
    main()
