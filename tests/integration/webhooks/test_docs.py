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
    delivery = request["headers"]["Herald-Delivery"]
    assert verify(endpoint["secret"], body, header, delivery)
    assert not verify(endpoint["secret"], body + b" ", header, delivery)
    assert not verify("whsec_another-secret-entirely", body, header, delivery)
    assert not verify(endpoint["secret"], body, "t=nonsense", delivery)
    # Replayed at once under a new Herald-Delivery, to get past the receiver's repeat check:
    assert not verify(endpoint["secret"], body, header, delivery + "0")
    assert not verify(endpoint["secret"], body, header, f"{endpoint['id']}.1-0")
    stale = signing.sign(endpoint["secret"], body, delivery, timestamp=1_700_000_000)
    assert not verify(endpoint["secret"], body, stale, delivery)  # a replay from long ago
