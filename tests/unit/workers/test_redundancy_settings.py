"""The settings of redundant workers: defaults, and one clear line for a bad value."""
import socket

import pytest

from app.digests import consumers
from app.webhooks.settings import Settings
from workers.archiver import lease_seconds


def test_defaults(monkeypatch):
    for name in ("DIGEST_CONSUMER", "DIGEST_CLAIM_IDLE", "ARCHIVER_LEASE", "WEBHOOK_LEASE"):
        monkeypatch.delenv(name, raising=False)
    assert consumers.consumer_name().startswith(f"digest-{socket.gethostname()}-")
    assert consumers.claim_idle() == 30
    assert lease_seconds() == 10
    assert Settings.from_env().lease == 10
    monkeypatch.setenv("DIGEST_CONSUMER", "digest-host-b")
    assert consumers.consumer_name() == "digest-host-b"


@pytest.mark.parametrize("name, value, read, message", [
    ("DIGEST_CONSUMER", "has space", consumers.consumer_name, "DIGEST_CONSUMER must be 1 to 200"),
    ("DIGEST_CLAIM_IDLE", "soon", consumers.claim_idle, "DIGEST_CLAIM_IDLE must be a number"),
    ("DIGEST_CLAIM_IDLE", "0", consumers.claim_idle, "DIGEST_CLAIM_IDLE must be from 0.1"),
    ("ARCHIVER_LEASE", "1", lease_seconds, "ARCHIVER_LEASE must be from 3 to 3600 seconds"),
    ("ARCHIVER_LEASE", "ten", lease_seconds, "ARCHIVER_LEASE must be a number of seconds"),
    ("WEBHOOK_LEASE", "2", Settings.from_env, "WEBHOOK_LEASE must be from 3 to 3600 seconds"),
])
def test_a_bad_value_is_one_line_naming_the_setting(monkeypatch, name, value, read, message):
    monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exc:
        read()
    assert message in str(exc.value) and "\n" not in str(exc.value)
