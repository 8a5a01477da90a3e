"""docs/webhooks.md's verification snippet, run as written against a real delivery by the
webhook worker (against Herald's own signing helper: tests/unit/webhooks/test_docs.py)."""
from app.stream.publish import Bus
from app.webhooks import signing
from tests.helpers.webhooks import register
from tests.support import wait_until
from tests.unit.webhooks.test_docs import documented_verify


def test_the_documented_snippet_verifies_a_real_delivery(client, admin_token, allow_loopback,
                                                          redis, receivers, start_worker):
    verify = documented_verify()
    receiver = receivers()
    endpoint = register(client, admin_token, receiver.url)
    start_worker()
    Bus(redis).publish("ops.db", "Signed é", data={"n": 1})
    wait_until(lambda: receiver.requests, timeout=10, message="the delivery")
    [request] = receiver.requests
    header, body = request["headers"]["Herald-Signature"], request["body"]
    assert verify(endpoint["secret"], body, header)
    assert not verify(endpoint["secret"], body + b" ", header)
    assert not verify("whsec_another-secret-entirely", body, header)
    assert not verify(endpoint["secret"], body, "t=nonsense")
    stale = signing.sign(endpoint["secret"], body, timestamp=1_700_000_000)
    assert not verify(endpoint["secret"], body, stale)  # a replay from long ago
