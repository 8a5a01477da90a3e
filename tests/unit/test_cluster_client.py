"""The cluster client fails as the single-Redis one does (app/cluster_client.py):
made without reaching the cluster, and an unreachable cluster raised as
redis.ConnectionError, which Herald's UNAVAILABLE covers. Against redis-py itself,
so that a change in what it raises fails here."""
import pytest
import redis
from redis.exceptions import RedisClusterException

from app.cluster_client import unreachable
from app.redis_client import UNAVAILABLE, connect, is_cluster
from tests.support import free_port


def nowhere():
    return connect(f"redis+cluster://127.0.0.1:{free_port()},127.0.0.1:{free_port()}/")


def test_a_cluster_client_is_made_without_reaching_the_cluster():
    client = nowhere()
    assert is_cluster(client)
    script = client.register_script("return 1")  # as build() does, before any command
    assert len(script.sha) == 40


@pytest.mark.parametrize("command", [lambda c: c.get("k"), lambda c: c.register_script("return 1")(),
                                     lambda c: c.pipeline(transaction=False).get("k").execute()])
def test_an_unreachable_cluster_is_an_outage_herald_rides_out(command):
    with pytest.raises(UNAVAILABLE) as raised:
        command(nowhere())
    assert isinstance(raised.value, redis.ConnectionError)
    assert "Redis Cluster cannot be connected" in str(raised.value)


def test_redis_py_still_says_so_as_this_module_reads_it():
    """What app/cluster_client.py recognises: RedisCluster made against no node."""
    with pytest.raises(RedisClusterException) as raised:
        redis.cluster.RedisCluster(host="127.0.0.1", port=free_port(), socket_connect_timeout=1)
    assert unreachable(raised.value)


def test_a_programming_error_is_not_taken_for_an_outage():
    assert not unreachable(RedisClusterException("EVALSHA - all keys must map to the same key slot"))


def test_a_command_that_timed_out_is_not_run_again():
    """It may have run (a publish stored twice); redis-py retries what ERRORS_ALLOW_RETRY
    lists, which this seam relies on, and a refused connection stays retried."""
    from app.cluster_client import HeraldCluster
    assert redis.TimeoutError in redis.cluster.RedisCluster.ERRORS_ALLOW_RETRY
    assert redis.TimeoutError not in HeraldCluster.ERRORS_ALLOW_RETRY
    assert redis.ConnectionError in HeraldCluster.ERRORS_ALLOW_RETRY
