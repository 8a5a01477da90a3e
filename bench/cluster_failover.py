"""A master of a Redis Cluster killed (SIGKILL) under a steady publish load.

A real cluster (3 masters, 3 replicas: tests/redis_cluster.py) carries a web
process and the ZeroMQ bridge, both with ``PUBLISH_REPLICAS=1`` (a publish is
answered once a replica has it). ``--clients`` copies of Herald's browser
client (bench/storm.js, herald.js in Node) follow a topic; publishes come
steadily from REST (idempotent, retried until accepted), from the bridge's
confirmed socket, and from a host app's transactional outbox (a row committed
in a SQLite database every 20 ms, shipped by the outbox's own relay thread,
herald_client.sqlalchemy, which waits out the outage and sends again). The
master holding ``herald:stream`` is killed; its replica takes over after the
cluster's node timeout. The killed node is started again once it was replaced
(as a supervisor restarts a crashed process): it comes back as the new master's
replica, and until it has synced the new master has no replica, so a publish
cannot be confirmed and is answered 503 (its publisher tries again, under the
same idempotency key). Reported:

- the publishes acknowledged (each side; the outbox's: its rows' Herald ids,
  once it has shipped them all), and those refused meanwhile;
- the time from the kill until the replica took over (the cluster ok again),
  and until the first publish acknowledged again (the old master back as a
  replica and synced);
- over every client: acknowledged notifications missing, duplicates, and
  notifications seen that were never acknowledged (published, then lost
  with the master before any replica had them: told live, never confirmed);
- whether the web process and the bridge came back by themselves.

    .venv/bin/python bench/cluster_failover.py [--clients 500] [--seconds 8]

tests/integration/cluster/test_failover.py runs it and asserts on the counts.
"""
import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.stream.keys import STREAM  # noqa: E402
from app.stream.publish import Bus  # noqa: E402
from app.users import accounts, subscriptions  # noqa: E402
from bench.storm import StormClients  # noqa: E402
from tests.redis_cluster import RedisCluster  # noqa: E402
from tests.support import Bridge, LiveServer, SteadyPublisher, rest_publisher, wait_until  # noqa: E402

TOPIC = "steady"
DURABLE = {"PUBLISH_REPLICAS": "1", "PUBLISH_REPLICA_TIMEOUT": "1"}


class TimedPublisher(SteadyPublisher):
    """A SteadyPublisher that notes when each acceptance came."""

    def __init__(self, publish, **options):
        self.times = []

        def timed(title):
            entry_id = publish(title)
            self.times.append(time.monotonic())
            return entry_id
        super().__init__(timed, **options)


def zmq_publish(bridge):
    """A publish function on the bridge's confirmed socket, waiting long enough for the
    bridge to ride out the failover (a timeout would make the publisher try the title
    again, and the first try may still be stored)."""
    from herald_client.zmq import Publisher
    publisher = Publisher(bridge.router, confirmed=True, timeout=60)
    lock = threading.Lock()

    def publish(title):
        with lock:
            return publisher.publish(TOPIC + ".zmq", title)
    return publish, publisher


class OutboxWriter(threading.Thread):
    """A host app's writes: a tracked row committed every ``interval`` seconds, which
    the outbox's relay (a thread of its own) publishes to Herald after the commit."""

    def __init__(self, url, api_key, folder, interval=0.02):
        super().__init__(daemon=True)
        from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine
        from sqlalchemy.orm import Session, registry

        from herald_client import HeraldClient
        from herald_client.sqlalchemy import Outbox
        self.engine = create_engine(f"sqlite:///{folder}/host.db")
        metadata = MetaData()
        rows = Table("rows", metadata, Column("id", Integer, primary_key=True),
                     Column("title", String(50)))

        class Row:
            pass
        registry().map_imperatively(Row, rows)
        metadata.create_all(self.engine)
        self.Row, self.Session, self.interval = Row, Session, interval
        self.outbox = Outbox(HeraldClient(url, api_key), session=Session)
        self.outbox.track(Row, prefix=TOPIC + ".outbox", data=lambda row: {"title": row.title})
        self.outbox.create_table(self.engine)
        self.outbox.start(self.engine)
        self.stopping = threading.Event()
        self.committed = 0

    def run(self):
        while not self.stopping.is_set():
            with self.Session(self.engine) as session:
                row = self.Row()
                row.title = f"row {self.committed}"
                session.add(row)
                session.commit()
            self.committed += 1
            time.sleep(self.interval)

    def shipped(self, timeout=60):
        """The Herald ids of every row, once the relay has shipped them all."""
        self.stopping.set()
        self.join(10)
        wait_until(lambda: self.outbox.counts(self.engine)["pending"] == 0, timeout=timeout,
                   message="the outbox shipping what was committed")
        with self.engine.connect() as connection:
            table = self.outbox.table
            return [row[0] for row in connection.execute(
                table.select().with_only_columns(table.c.herald_id))]

    def close(self):
        self.stopping.set()
        self.outbox.stop()
        self.outbox.close()
        self.engine.dispose()


def run(folder, clients=500, seconds=8.0):
    """The scenario; returns its figures (a dict)."""
    folder = Path(folder)
    cluster = RedisCluster(folder / "cluster")
    cluster.start()
    server = bridge = crowd = outbox = None
    publishers, zmq_socket = [], None
    try:
        client = cluster.client()
        accounts.create_user(client, "ann", "ann-password")
        subscriptions.add(client, "ann", [TOPIC], limit=10)
        key = accounts.create_api_key(client, "failover")
        server = LiveServer(cluster.url, folder, **DURABLE)
        server.start()
        bridge = Bridge(cluster.url, folder, **DURABLE)
        bridge.start()
        crowd = StormClients(server.url, [server.token("ann", "ann-password")], clients, folder)
        zmq, zmq_socket = zmq_publish(bridge)
        publishers = [TimedPublisher(rest_publisher(server, key, TOPIC + ".rest"), interval=0.02),
                      TimedPublisher(zmq, interval=0.02)]
        outbox = OutboxWriter(server.url, key, folder)
        for publisher in [*publishers, outbox]:
            publisher.start()
        wait_until(lambda: all(len(p.accepted) >= 25 for p in publishers)
                   and outbox.outbox.counts(outbox.engine)["sent"] >= 25, timeout=60,
                   message="publishing before the kill")
        victim = cluster.master_of(STREAM)
        killed_at = time.monotonic()
        cluster.kill(victim)
        wait_until(lambda: cluster.master_of(STREAM) is not victim, timeout=60, interval=0.05,
                   message="the replica taking over")
        cluster.wait_healthy(timeout=60)
        taken_over = time.monotonic() - killed_at
        victim.start()  # restarted: it rejoins as the new master's replica
        wait_until(lambda: all(p.times and p.times[-1] > killed_at for p in publishers), timeout=60,
                   message="publishes acknowledged again after the kill")
        back_after = max(min(t for t in p.times if t > killed_at) for p in publishers) - killed_at
        time.sleep(seconds)
        for publisher in publishers:
            publisher.stop()
        cluster.wait_healthy()
        shipped = outbox.shipped()
        accepted = [i for p in publishers for i in p.accepted] + shipped
        marker = Bus(cluster.client()).publish(TOPIC + ".marker", "marker")
        wait_until(lambda: crowd.status(marker)["have"] == clients, timeout=60,
                   message="every client has the marker")
        ordered = sorted(accepted + [marker], key=lambda i: tuple(int(p) for p in i.split("-")))
        check = crowd.check(ordered, folder)
        return {
            "clients": clients, "acknowledged_rest": len(publishers[0].accepted),
            "acknowledged_zmq": len(publishers[1].accepted),
            "acknowledged_outbox": len(shipped), "committed_outbox": outbox.committed,
            "refused_rest": publishers[0].refused, "refused_zmq": publishers[1].refused,
            "seconds_to_replica_taking_over": round(taken_over, 2),
            "seconds_to_first_acknowledged_after_kill": round(back_after, 2),
            "missing": check["missing_total"], "duplicates": check["duplicate_total"],
            "seen_never_acknowledged": check["unexpected_total"],
            "web_process_alive": server.process.poll() is None,
            "bridge_alive": bridge.process.poll() is None,
            "killed_master": victim.port,
        }
    finally:
        for publisher in publishers:
            publisher.stopping.set()
        if zmq_socket is not None:
            zmq_socket.close()
        if outbox is not None:
            outbox.close()
        for part in (crowd, bridge, server):
            if part is not None:
                part.stop()
        cluster.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=8.0, help="publishing after the failover")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print(json.dumps(run(folder, args.clients, args.seconds), indent=2))


if __name__ == "__main__":
    main()
