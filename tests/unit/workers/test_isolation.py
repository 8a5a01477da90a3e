"""The isolation proof's one exception, documented: the ZeroMQ bridge's egress is a trusted
interface that carries every notification (the proof itself, on a live server and the
digest worker: tests/integration/security/test_isolation.py)."""
from tests.support import ROOT


def test_zmq_egress_is_documented_as_a_trusted_interface():
    doc = (ROOT / "docs" / "zmq-bridge.md").read_text()
    assert "Egress is a trusted-service interface" in doc
    assert "private ones included" in doc
