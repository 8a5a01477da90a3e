"""Redis clients share a bounded pool, and a burst past its size waits instead of failing."""
import threading

from app.redis_client import connect


def test_more_callers_than_connections_wait_their_turn(redis_server):
    client = connect(redis_server.url, max_connections=4)
    errors, done = [], []

    def call():
        try:
            client.blpop("herald:test:nothing", timeout=0.2)  # holds its connection 0.2 s
            done.append(True)
        except Exception as exc:  # what redis-py's default pool raises: "Too many connections"
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(12)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    finally:
        client.close()
    assert errors == []
    assert len(done) == 12


def test_an_outage_is_said_once_backs_off_and_says_when_it_ends(caplog):
    import logging

    from app.redis_client import Outage
    slept = []
    outage = Outage(logging.getLogger("herald.test"), first=0.1, most=0.3, sleep=slept.append)
    with caplog.at_level(logging.INFO, logger="herald.test"):
        for _ in range(4):
            outage.failed(ConnectionError("refused"))
        assert outage.down
        outage.ok()
        outage.ok()
    assert slept == [0.1, 0.2, 0.3, 0.3]
    assert [r.getMessage() for r in caplog.records] == [
        "Redis is unreachable (refused); retrying with backoff", "Redis is back"]
    assert not outage.down and outage.backoff == 0.1
