"""A client that stops reading is cut off at its bound; others are not held up."""
import pytest

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.support import Listener, LiveServer, StalledClient, rss_mb, wait_until

FLOOD = 10_000
BLOB = "x" * 8000  # ~8 KB per notification: 80 MB in all, were it all queued
RSS_BOUND_MB = 64


@pytest.fixture
def server(redis_server, redis, tmp_path):
    live = LiveServer(redis_server.url, tmp_path, SLOW_CLIENT_MAX_QUEUE="500")
    live.start()
    yield live
    live.stop()


def test_stalled_client_is_disconnected_and_memory_stays_bounded(server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["flood"], limit=10)
    token = server.token("ann", "ann-password")
    normal = Listener(server, token)
    stalled = StalledClient(server, token, "flood")
    bus = Bus(redis)
    pid = server.process.pid
    baseline = rss_mb(pid)
    peak = baseline
    sent = []
    try:
        for start in range(0, FLOOD, 200):
            sent += [bus.publish("flood.data", f"n{i}", data={"blob": BLOB})
                     for i in range(start, start + 200)]
            # Pace the flood to what the normal client reads, so only the stalled one lags.
            wait_until(lambda: len(normal.received) >= len(sent) - 400, timeout=30,
                       message="the normal client to keep up")
            peak = max(peak, rss_mb(pid))
        wait_until(lambda: len(normal.received) == FLOOD, timeout=30, message="all delivered")
        peak = max(peak, rss_mb(pid))
    finally:
        stalled.close()
        normal.close()
    assert normal.ids() == sent
    growth = peak - baseline
    print(f"server RSS: baseline {baseline:.1f} MB, peak {peak:.1f} MB, growth {growth:.1f} MB")
    assert growth < RSS_BOUND_MB
    assert "packets waiting (bound 500): disconnecting it" in server.log_path.read_text()
