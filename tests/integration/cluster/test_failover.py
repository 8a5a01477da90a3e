"""A master of a real Redis Cluster killed under steady publishing (bench/cluster_failover.py,
its figures in docs/deploy.md): with PUBLISH_REPLICAS=1, every notification acknowledged
to its publisher, from REST, the ZeroMQ bridge or a host app's outbox, reaches each of 500 herald.js clients
exactly once after the replica takes over, and the web process and the bridge come back
by themselves."""
from bench import cluster_failover


def test_a_master_killed_under_load_loses_nothing_acknowledged(tmp_path):
    figures = cluster_failover.run(tmp_path, clients=500, seconds=4)
    print(figures)
    assert figures["acknowledged_rest"] > 25 and figures["acknowledged_zmq"] > 25, figures
    assert figures["acknowledged_outbox"] == figures["committed_outbox"] > 25, figures
    assert figures["missing"] == 0, figures
    assert figures["duplicates"] == 0, figures
    assert figures["web_process_alive"] and figures["bridge_alive"], figures
