"""One SparkSession for the whole test session: local[2], no UI, stopped at the end."""
import pytest
from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark():
    session = (SparkSession.builder.master("local[2]").appName("herald-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    yield session
    session.stop()


@pytest.fixture
def herald_redis(redis_server, redis, monkeypatch):
    """Jobs publish through REDIS_URL: point it at the tests' redis-server."""
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    return redis
