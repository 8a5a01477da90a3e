"""app/stream/history.py's scan: long reads that ask for the next read early, and stop early."""
import pytest

from app.redis_client import connect
from app.stream import history
from app.stream.publish import Bus


@pytest.fixture
def small_pool(redis_server, redis):
    """A client with two connections at most, waiting one second for one: a scan that
    kept a connection would make the third scan fail."""
    client = connect(redis_server.url, max_connections=2, timeout=1)
    yield client
    client.close()


def publish_blocks(redis, blocks, noise):
    """``blocks`` rare notifications, each after ``noise`` others; returns the rare ids."""
    bus = Bus(redis)
    rare = []
    for block in range(blocks):
        for i in range(0, noise, 100):
            bus.publish_envelopes([{"topic": "noise", "title": f"n{block}-{i + j}"}
                                   for j in range(min(100, noise - i))])
        rare.append(bus.publish("rare.event", f"rare {block}"))
    return rare


def test_scans_that_stop_early_give_their_connection_back(small_pool, redis):
    rare = publish_blocks(redis, 3, 3000)   # reads of 200, 800, 3200: a read is pending
    wanted = history.Filter(text="rare")
    for _ in range(10):
        found, _, next_before = history.feed_latest(small_pool, "bob", ["*"], 1, wanted,
                                                    before=rare[-1])
        assert [n["id"] for n in found] == [rare[-2]] and next_before == rare[-2]
        found, cursor = history.feed_after(small_pool, "bob", ["*"], rare[0], 1, wanted)
        assert [n["id"] for n in found] == [rare[1]] and cursor == rare[1]
    assert small_pool.ping()


def test_a_scan_to_the_end_reads_everything_once(small_pool, redis):
    rare = publish_blocks(redis, 4, 2500)
    for _ in range(5):
        found, _, next_before = history.feed_latest(small_pool, "bob", ["rare"], 1000)
        assert [n["id"] for n in found] == rare and next_before is None
        found, cursor = history.feed_after(small_pool, "bob", ["rare"], "0-0", 1000)
        assert [n["id"] for n in found] == rare and cursor == rare[-1]


def test_a_stream_that_ends_on_a_full_read(redis):
    """200 entries, read 200 at a time: the scan asks once more, gets nothing, and ends."""
    bus = Bus(redis)
    ids = []
    for start in (0, 100):
        ids += [p["id"] for p in bus.publish_envelopes(
            [{"topic": "t", "title": f"x{start + i}"} for i in range(100)])[0]["notifications"]]
    found, newest, next_before = history.feed_latest(redis, "bob", ["*"], 1000,
                                                     history.Filter(text="nothing"))
    assert found == [] and newest == ids[-1] and next_before is None
    found, cursor = history.feed_after(redis, "bob", ["*"], "0-0", 1000,
                                       history.Filter(text="x19"))
    assert [n["id"] for n in found] == [ids[19]] + ids[190:200] and cursor == ids[-1]
