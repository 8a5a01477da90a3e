"""A real Redis Cluster for tests: 3 masters and 3 replicas on free loopback
ports, made as an operator makes one (``redis-server --cluster-enabled yes``
for each node, then ``redis-cli --cluster create --cluster-replicas 1``).

Herald reaches it by ``redis+cluster://host:port,host:port/``, the URL an
operator sets. Every node is stopped by :meth:`RedisCluster.stop`; a test that
kills a master (:meth:`kill`) sees its replica take over, as in production.
"""
import os
import socket
import subprocess
from pathlib import Path

import redis

from app.ops import processes
from app.redis_client import connect, is_cluster
from tests.support import RedisServer, crash, free_port, wait_until

# HERALD_TEST_REDIS=cluster runs the whole suite on a cluster (``make test-cluster``).
ON_CLUSTER = os.environ.get("HERALD_TEST_REDIS") == "cluster"

NODE_TIMEOUT_MS = 2000  # how long a master may be silent before its replica takes over


def free_cluster_port(tries=200):
    """A free port whose cluster bus port (10,000 above it) is free too: Redis
    refuses a cluster node on a port above 55535."""
    for _ in range(tries):
        port = free_port()
        if port <= 55535 and _free(port + 10000):
            return port
    raise AssertionError(f"no free port pair for a cluster node in {tries} tries")


def _free(port):
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class Node:
    """One redis-server of the cluster, its data and log in its own folder."""

    def __init__(self, folder, port, durable=True):
        self.folder, self.port, self.durable = Path(folder), port, durable
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.folder), "--cluster-enabled", "yes",
             "--cluster-config-file", "nodes.conf",
             "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
             *(["--appendonly", "yes", "--appendfsync", "always"] if self.durable
               else ["--appendonly", "no"]), "--save", "",
             "--logfile", str(self.folder / "redis.log")])

    def client(self):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5,
                           socket_connect_timeout=2, decode_responses=True)

    def answers(self):
        try:
            with self.client() as client:
                return client.ping()
        except redis.RedisError:
            return False

    def info(self, section):
        with self.client() as client:
            return client.info(section)

    def kill(self):
        crash(self.process)

    def stop(self):
        processes.stop(self.process)


class RedisCluster:
    """``masters`` masters, each with ``replicas`` replicas, on free ports."""

    def __init__(self, folder, masters=3, replicas=1, durable=True):
        self.folder = Path(folder)
        self.nodes = [Node(self.folder / f"node-{i}", free_cluster_port(), durable)
                      for i in range(masters * (1 + replicas))]
        self.replicas = replicas
        self.created = False
        self.url = "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes) + "/"

    def start(self, wait=True):
        """Start every node; the first time, make them a cluster. Started again after
        :meth:`kill`, the nodes come back with their data and their cluster config."""
        for node in self.nodes:
            if not (node.process and node.process.poll() is None):
                node.start()
        if self.created:
            if wait:
                self.wait_healthy()
            return
        for node in self.nodes:
            wait_until(node.answers, timeout=10, message=f"cluster node {node.port} to answer")
        created = subprocess.run(
            ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in self.nodes),
             "--cluster-replicas", str(self.replicas), "--cluster-yes"],
            capture_output=True, text=True, timeout=60)
        if created.returncode:
            raise RuntimeError(f"redis-cli --cluster create failed: {created.stdout}{created.stderr}")
        self.created = True
        self.wait_healthy()

    def wait_healthy(self, timeout=30):
        """Until every live node says the cluster is ok and sees every slot served, and
        every live replica's link to its master is up (else a WAIT finds no replica, and a
        replica that never synced refuses to take over)."""
        def healthy():
            for node in self.live():
                try:
                    info = node.client().cluster("info")
                    replication = node.info("replication")
                except redis.RedisError:
                    return False
                if info.get("cluster_state") != "ok" or int(info.get("cluster_slots_ok", 0)) != 16384:
                    return False
                if replication.get("role") == "slave" and replication.get("master_link_status") != "up":
                    return False
            return True
        wait_until(healthy, timeout=timeout, interval=0.1, message="the cluster to be ok")

    def live(self):
        return [n for n in self.nodes if n.process and n.process.poll() is None]

    def masters(self):
        """The live nodes that are masters now (after a failover, a former replica)."""
        return [n for n in self.live() if n.info("replication").get("role") == "master"]

    def master_of(self, key):
        """The live master serving ``key``'s slot, as the cluster says now."""
        slot = redis.cluster.key_slot(key.encode())
        with self.masters()[0].client() as client:
            for start, end, master, *_ in client.execute_command("CLUSTER", "SLOTS"):
                if start <= slot <= end:
                    return next(n for n in self.nodes if n.port == int(master[1]))
        raise AssertionError(f"no master serves {key!r} (slot {slot})")

    def client(self):
        return connect(self.url)

    def flushall(self):
        for node in self.masters():
            with node.client() as client:
                client.flushall()

    def kill(self, node=None):
        """SIGKILL ``node``, as a crash would (its replica takes over after the node
        timeout), or with no node every node: the whole cluster gone, as one Redis
        killed is; :meth:`start` brings it back."""
        for each in [node] if node else self.nodes:
            each.kill()

    def stop(self):
        for node in self.nodes:
            node.stop()


def session_redis(folder, durable=True):
    """The session's Redis for the tests: one redis-server, or a cluster when
    HERALD_TEST_REDIS=cluster."""
    return RedisCluster(folder, durable=durable) if ON_CLUSTER else RedisServer(folder, durable=durable)


def every_key(client, pattern):
    """KEYS ``pattern`` over the whole keyspace: every master's, on a cluster."""
    if is_cluster(client):
        return client.keys(pattern, target_nodes=redis.cluster.RedisCluster.PRIMARIES)
    return client.keys(pattern)


def subscribers(client, channel):
    """How many connections listen on pub/sub ``channel``, on whichever node they are."""
    if not is_cluster(client):
        return client.pubsub_numsub(channel)[0][1]
    return sum(client.get_redis_connection(node).pubsub_numsub(channel)[0][1]
               for node in client.get_nodes())


def node_of(client, key):
    """The client of the node that serves ``key`` (``client`` itself on one Redis)."""
    if not is_cluster(client):
        return client
    return client.get_redis_connection(client.get_node_from_key(key))
