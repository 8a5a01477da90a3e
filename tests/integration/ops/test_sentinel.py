"""REDIS_URL may name Redis Sentinels: Herald finds the master through them.

A real redis-server and a real sentinel (redis-server --sentinel) on free
loopback ports; the web process publishes, relays and rate-limits through
the sentinel URL.
"""
import subprocess

import pytest
import requests

from app.ops import processes
from app.redis_client import SentinelURLError, connect, parse_sentinel_url
from app.users import accounts, subscriptions
from tests.support import Listener, LiveServer, free_port, wait_until


class SentinelServer:
    def __init__(self, folder, master_port, service="herald"):
        self.port = free_port()
        self.config = folder / "sentinel.conf"
        self.config.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {folder}\nlogfile {folder / 'sentinel.log'}\n"
            f"sentinel monitor {service} 127.0.0.1 {master_port} 1\n")
        self.url = f"redis+sentinel://127.0.0.1:{self.port}/{service}/0"
        self.process = subprocess.Popen(["redis-server", str(self.config), "--sentinel"])

    def stop(self):
        processes.stop(self.process)


@pytest.fixture
def sentinel(redis_server, redis, tmp_path):
    server = SentinelServer(tmp_path, redis_server.port)
    client = connect(server.url)

    def master_known():
        try:
            return client.ping()
        except Exception:
            return False
    try:
        wait_until(master_known, timeout=15, message="the sentinel to know the master")
        yield server
    finally:
        client.close()
        server.stop()


@pytest.mark.single_redis("a sentinel watches one redis-server's master, not a cluster's")
def test_herald_runs_on_a_sentinel_url(sentinel, redis, tmp_path):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["news"], limit=10)
    key = accounts.create_api_key(redis, "etl")
    server = LiveServer(sentinel.url, tmp_path)
    server.start()
    listener = None
    try:
        listener = Listener(server, server.token("ann", "ann-password"))
        published = server.publish(key, topic="news.world", title="via sentinel")
        wait_until(lambda: listener.ids() == [published], timeout=10, message="delivery")
        assert redis.xlen("herald:stream") == 1  # the master the sentinel named
        assert any(b"herald:limits" in k for k in redis.keys("*"))  # the limiter counts there too
        assert requests.get(server.url + "/readyz", timeout=5).status_code == 200
    finally:
        if listener:
            listener.close()
        server.stop()


def test_sentinel_urls_are_parsed_or_refused_clearly():
    assert parse_sentinel_url("redis+sentinel://:pw@a:26379,b:26380/herald/2") == (
        [("a", 26379), ("b", 26380)], "herald", 2, "pw")
    assert parse_sentinel_url("redis+sentinel://a:1/svc") == ([("a", 1)], "svc", 0, None)
    for bad in ("redis+sentinel://a/svc", "redis+sentinel://a:1/", "redis+sentinel://a:1/s/x"):
        with pytest.raises(SentinelURLError, match="REDIS_URL"):
            parse_sentinel_url(bad)
