"""A reconnect storm: 500 clients on one web process, which is killed and restarted.

The clients are Herald's own browser client (clients/js/herald.js, run unchanged
in Node by bench/storm.js, the benchmark's harness), 500 of them on loopback,
subscribed through five users. Notifications are published all along, straight
to Redis; the web process is SIGKILLed and started again on the same port with
a low connect rate (``ADMIT_RATE``), so that the storm of reconnects is refused
in part with "unavailable: busy, retry later" and spread over several seconds.

What must hold, whatever the timing:

- every client comes back, and every attempt it made carried the newest id it
  had received as ``last_id``; every replay after the restart is whole;
- every client received every notification published, exactly once, in order
  (what its socket received, before the client drops duplicates);
- some connects were refused as busy (the client counted them, and so did the
  server's /metrics), so the retry-later path was taken;
- clients already back got notifications published during the storm live, and
  none of them was lost and replayed to again.
"""
import importlib.util

import pytest

from tests.support import ROOT

CLIENTS = 500
BOUNDS = {"ADMIT_RATE": "40", "ADMIT_BURST": "20", "REPLAY_CONCURRENCY": "4", "REPLAY_QUEUE": "50"}


def bench_storm():
    """bench/storm.py, the benchmark's harness (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_storm", ROOT / "bench" / "storm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(400)
def test_every_client_comes_back_and_gets_everything_once(redis_server, redis, tmp_path):
    # The clients' widest reconnect window is 2 s (5 s in a browser): they come back
    # faster than ADMIT_RATE lets them in, so some are told to retry later.
    result = bench_storm().storm(redis_server.url, redis, tmp_path, CLIENTS, BOUNDS,
                                 interval=0.05, cap=2000, settle_timeout=240)
    assert result["clients"] == CLIENTS
    assert result["settled"], "not every client was live again, with the last notification"
    assert result["not_back"] == 0
    assert result["wrong_last_id"] == 0, "a reconnect without the newest id received as last_id"
    assert result["not_recovered"] == 0
    assert result["mismatched"] == 0, result["examples"]
    assert result["expected"] == result["published"]
    # The retry-later path was taken, and both ends saw the same refusals.
    assert result["busy_refusals"] > 0
    assert result["server_deferred"] >= result["busy_refusals"]
    assert 0 < result["retry_after_max_s"] <= 30
    # Live delivery went on during the storm, to the clients already back.
    assert result["storm_live_deliveries"] > 0
    assert result["storm_live_clients"] > 0
    assert result["relapsed"] == 0
