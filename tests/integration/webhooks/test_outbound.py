"""The webhook worker's refusal of a setting it cannot use, reported where /readyz and
/metrics show it (the address rules and the allow-list: tests/unit/webhooks/test_outbound.py)."""
import subprocess
import sys

from app.ops import worker_health
from tests.support import ROOT


def test_a_bad_allow_setting_is_a_worker_fault(redis, redis_server, monkeypatch):
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    monkeypatch.setenv("WEBHOOK_ALLOW", "10.0.0.0/33")
    done = subprocess.run([sys.executable, "-m", "workers.webhooks"], cwd=ROOT, timeout=30,
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "WEBHOOK_ALLOW: '10.0.0.0/33' is neither a CIDR nor a host name" in done.stderr
    assert "WEBHOOK_ALLOW" in worker_health.faults(redis)["webhook worker"]["detail"]


def test_a_bad_number_is_a_worker_fault(redis, redis_server, monkeypatch):
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    monkeypatch.setenv("WEBHOOK_BACKOFF_BASE", "soon")
    done = subprocess.run([sys.executable, "-m", "workers.webhooks"], cwd=ROOT, timeout=30,
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "WEBHOOK_BACKOFF_BASE must be a number" in worker_health.faults(redis)["webhook worker"]["detail"]
