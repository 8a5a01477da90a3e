"""The transactional outbox (herald_client.sqlalchemy): its cost, its speed, its latency,
and what a Herald outage looks like to the host app. On SQLite and on PostgreSQL.

Runs a redis-server and Herald (``python wsgi.py``), and for each database:

- **commit cost**: the median and p99 time of a commit that changes one row of
  a tracked model (the outbox row written with it) beside one of an untracked
  model, the relay off;
- **throughput**: ``--rows`` changes committed ten to a transaction with the
  relay off, then shipped by ``relay_once``: rows relayed per second;
- **overlapping writers** (PostgreSQL): 4 threads, each committing 50
  transactions that write a tracked change, then work 5 ms, then commit;
  transactions a second, tracked and untracked (what ordering the commits
  costs transactions that overlap);
- **latency**: commit-to-subscriber, over ``--count`` changes one every
  ``--gap`` ms: from just before the commit to a python-socketio client's
  arrival, through the outbox (its relay woken by the commit), through a
  direct ``publish`` right after the commit (the dual write), and through a
  relay no commit of its process wakes (``apart``: ``flask herald relay`` in
  a process of its own; on PostgreSQL the commit's NOTIFY wakes it, on
  SQLite it polls every second);
- **outage**: a host app commits one change every 20 ms for 10 s, then Herald's
  web process is stopped for ``--outage`` seconds, then started again, 15 s
  more: commit latency in each phase, how long the backlog took to reach
  Herald after it came back, and that every change arrived exactly once.

PostgreSQL is a private cluster (tests/databases.py) with fsync off: the
figures compare paths on one database, not databases.

    .venv/bin/python bench/outbox.py [--rows 5000] [--count 100] [--gap 20] [--outage 30]
"""
import argparse
import contextlib
import tempfile
import threading
import time
from pathlib import Path

from common import save, stack, summary  # first: it puts the project on sys.path
from sqlalchemy import Integer, String, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from app.stream.keys import STREAM
from herald_client import HeraldClient
from herald_client.outbox_relay import Relay
from herald_client.sqlalchemy import Outbox
from tests.databases import postgres_server
from tests.support import Listener, wait_until


class Base(DeclarativeBase):
    pass


class Card(Base):
    __tablename__ = "bench_cards"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str] = mapped_column(String(200))


class Plain(Base):
    __tablename__ = "bench_plain"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str] = mapped_column(String(200))


@contextlib.contextmanager
def database(url):
    engine = create_engine(url)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_wal)
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    try:
        yield engine
    finally:
        engine.dispose()


def _sqlite_wal(connection, _record):
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA busy_timeout=10000")


def make_outbox(client, engine):
    outbox = Outbox(client)
    outbox.track(Card, prefix="bench.card", data=lambda card: {"title": card.title})
    outbox.table.drop(engine, checkfirst=True)
    outbox.create_table(engine)
    return outbox


def timed_commit(engine, model, title):
    """Seconds one commit of one new ``model`` took."""
    with Session(engine) as session:
        session.add(model(title=title))
        started = time.perf_counter()
        session.commit()
        return time.perf_counter() - started


def commit_cost(engine, outbox, count=500):
    """Commits of one change, untracked and tracked in turn (the relay off)."""
    plain, tracked = [], []
    for i in range(count):
        plain.append(timed_commit(engine, Plain, f"plain {i}") * 1000)
        tracked.append(timed_commit(engine, Card, f"tracked {i}") * 1000)
    outbox.relay_once(engine)  # ship these now: the throughput figure counts its own rows
    return {"untracked_ms": summary(plain), "tracked_ms": summary(tracked)}


def throughput(engine, outbox, rows):
    with Session(engine) as session:
        for start in range(0, rows, 10):
            session.add_all(Card(title=f"card {i}") for i in range(start, min(rows, start + 10)))
            session.commit()
    started = time.perf_counter()
    shipped = outbox.relay_once(engine)
    seconds = time.perf_counter() - started
    return {"rows": shipped, "seconds": round(seconds, 3), "rows_per_s": round(shipped / seconds)}


def overlapping(engine, threads=4, each=50, work_ms=5.0):
    """Transactions a second from ``threads`` writers at once, each transaction writing
    one change, working ``work_ms``, then committing; tracked (Card) and untracked."""
    result = {}
    for name, model in (("untracked", Plain), ("tracked", Card)):
        def writer(n, model=model):
            for i in range(each):
                with Session(engine) as session:
                    session.add(model(title=f"writer {n} change {i}"))
                    session.flush()
                    time.sleep(work_ms / 1000)
                    session.commit()
        workers = [threading.Thread(target=writer, args=(n,)) for n in range(threads)]
        started = time.perf_counter()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(120)
        result[f"{name}_per_s"] = round(threads * each / (time.perf_counter() - started))
    return result


def latency(engine, outbox, server, client, redis, count, gap_ms):
    listener = Listener(server, server.token("bench", "bench-password"))
    results = {}
    apart = None
    try:
        outbox.start(engine)
        for path in ("outbox", "direct", "apart"):
            if path == "apart":  # a relay no commit of its process wakes (flask herald relay)
                outbox.stop()
                apart = Relay(client, engine, outbox.table, poll=1.0).start()
            started = {}
            for i in range(count):
                title = f"{path} {i}"
                started[title] = time.time()
                with Session(engine) as session:
                    session.add(Plain(title=title) if path == "direct" else Card(title=title))
                    session.commit()
                if path == "direct":
                    client.publish("bench.card.created", title, kind="data", data={"title": title})
                time.sleep(gap_ms / 1000)
            arrived = wait_until(lambda: _arrivals(listener, started), timeout=60,
                                 message=f"every {path} change")
            results[path + "_ms"] = summary([(arrived[t] - s) * 1000 for t, s in started.items()])
    finally:
        outbox.stop()
        if apart is not None:
            apart.stop()
        listener.close()
    return results


def _arrivals(listener, started):
    with listener.lock:
        seen = {n["data"]["title"]: at for n, at in zip(listener.received, listener.arrivals,
                                                         strict=True)
                if n.get("data") and n["data"].get("title") in started}
    return seen if len(seen) == len(started) else None


def outage(engine, outbox, server, redis, seconds):
    """Commit every 20 ms across a Herald outage of ``seconds``."""
    before = redis.xlen(STREAM)
    outbox.start(engine)
    phases = {"before": [], "during": [], "after": []}
    phase = ["before"]
    stop = threading.Event()
    made = [0]

    def commit_steadily():
        while not stop.is_set():
            phases[phase[0]].append(timed_commit(engine, Card, f"steady {made[0]}") * 1000)
            made[0] += 1
            stop.wait(0.02)

    committer = threading.Thread(target=commit_steadily)
    committer.start()
    try:
        time.sleep(10)
        server.stop()
        phase[0] = "during"
        time.sleep(seconds)
        backlog = outbox.counts(engine)["pending"]
        phase[0] = "after"
        server.start()
        back = time.monotonic()
        # Caught up: nothing pending (the committer goes on meanwhile; each commit's
        # rows are shipped within milliseconds once Herald answers again).
        wait_until(lambda: outbox.counts(engine)["pending"] == 0, timeout=120, interval=0.05,
                   message="the backlog")
        drained = time.monotonic() - back
        time.sleep(max(0.0, 15 - drained))
    finally:
        stop.set()
        committer.join(30)
    wait_until(lambda: outbox.counts(engine)["pending"] == 0, timeout=60, message="the last rows")
    outbox.stop()
    published = redis.xlen(STREAM) - before
    return {"commits": made[0], "published": published, "exactly_once": published == made[0],
            "backlog_at_return": backlog, "drained_after_return_s": round(drained, 2),
            "commit_ms": {name: summary(values) for name, values in phases.items() if values}}


def run(url, args, server, redis, key):
    client = HeraldClient(server.url, key)
    result = {}
    with database(url) as engine:
        outbox = make_outbox(client, engine)
        result["commit_cost"] = commit_cost(engine, outbox)
        result["throughput"] = throughput(engine, outbox, args.rows)
        if engine.dialect.name == "postgresql":  # SQLite has one writer: nothing overlaps
            result["overlapping"] = overlapping(engine)
            outbox.relay_once(engine)
        result["latency"] = latency(engine, outbox, server, client, redis, args.count, args.gap)
        result["outage"] = outage(engine, outbox, server, redis, args.outage)
        outbox.close()
    client.close()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--gap", type=float, default=20, help="ms between changes (latency)")
    parser.add_argument("--outage", type=float, default=30, help="seconds Herald is away")
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    args = parser.parse_args()
    results = {}
    with stack(topics=("bench",)) as (_redis_server, redis, server, key):
        if args.only != "postgresql":
            folder = Path(tempfile.mkdtemp(prefix="herald-bench-db-"))
            results["sqlite"] = run(f"sqlite:///{folder / 'host.db'}", args, server, redis, key)
        if args.only != "sqlite":
            with postgres_server() as url:
                results["postgresql"] = run(url, args, server, redis, key)
    for name, result in results.items():
        cost, thr, lat, out = (result[k] for k in ("commit_cost", "throughput", "latency", "outage"))
        print(f"{name}:")
        print(f"  commit of one change: untracked {cost['untracked_ms']['median']:.2f} ms "
              f"(p99 {cost['untracked_ms']['p99']:.2f}), tracked {cost['tracked_ms']['median']:.2f} ms "
              f"(p99 {cost['tracked_ms']['p99']:.2f})")
        print(f"  relayed {thr['rows']} rows in {thr['seconds']} s: {thr['rows_per_s']} rows/s")
        if "overlapping" in result:
            over = result["overlapping"]
            print(f"  4 overlapping writers (write, work 5 ms, commit): untracked "
                  f"{over['untracked_per_s']} transactions/s, tracked {over['tracked_per_s']}/s")
        for path in ("outbox", "direct", "apart"):
            figures = lat[path + "_ms"]
            print(f"  commit-to-subscriber via {path}: median {figures['median']:.1f} ms, "
                  f"p99 {figures['p99']:.1f} ms")
        print(f"  outage of {args.outage:.0f} s: {out['commits']} commits, {out['published']} "
              f"published (exactly once: {out['exactly_once']}); {out['backlog_at_return']} rows "
              f"waiting at its end, shipped {out['drained_after_return_s']} s after Herald came back")
        for phase, figures in out["commit_ms"].items():
            print(f"    commit {phase}: median {figures['median']:.2f} ms, p99 {figures['p99']:.2f} ms, "
                  f"max {figures['max']:.2f} ms ({figures['count']})")
    print(f"written to {save('outbox', {'args': vars(args), **results})}")


if __name__ == "__main__":
    main()
