"""A client flooding a live web process with events is cut off at its message budget, and
nobody else notices (the budgets themselves: tests/unit/realtime/test_budgets.py)."""
import pytest
import requests
import websocket

from app.users import accounts, subscriptions
from tests.support import Listener, LiveServer, flood_reads, rss_mb, wait_for, wait_until


@pytest.fixture
def flooded(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path, CLIENT_MESSAGE_RATE="20",
                        CLIENT_MESSAGE_BURST="100")
    server.start()
    accounts.create_user(redis, "ann", "ann-password")
    accounts.create_user(redis, "eve", "eve-password")
    subscriptions.add(redis, "ann", ["news"], limit=10)
    yield server
    server.stop()


def test_a_client_flooding_events_is_cut_off_and_nobody_else_notices(flooded, redis):
    server = flooded
    ann = Listener(server, server.token("ann", "ann-password"))
    key = accounts.create_api_key(redis, "pub")
    baseline = rss_mb(server.process.pid)
    abusers = []
    try:
        for _ in range(5):  # 5 connections, 20,000 events each
            abusers.append(flood_reads(server, server.token("eve", "eve-password"), 20_000))
        # A publish over REST, and its delivery to a normal client, are not held up.
        sent = server.publish(key, topic="news.a", title="still served")
        wait_until(lambda: sent in ann.ids(), timeout=5, message="delivery during the flood")

        def cut_off():
            metrics = requests.get(server.url + "/metrics", timeout=5).text
            lines = [line for line in metrics.splitlines() if line.startswith("herald_abusive_disconnects")]
            return float(lines[0].split()[-1]) if lines else 0
        # Each flood is cut off as the server reads past its budget, in no order with the
        # delivery above: wait for all five.
        wait_for(cut_off, lambda count: count >= 5, message="the five floods cut off")
    finally:
        for ws in abusers:
            try:
                ws.close()
            except (OSError, websocket.WebSocketException):
                pass  # the server closed it first
            ws.shutdown()  # close() leaves the socket open once the peer has closed
        ann.close()
    # The process did not keep what the flood cost.
    assert rss_mb(server.process.pid) - baseline < 60
