"""docs/webhooks.md's verification snippet, run as written against a real delivery,
and Herald's own signing helper against it."""
import re

from app.stream.publish import Bus
from app.webhooks import signing
from tests.support import ROOT, wait_until
from tests.webhooks.conftest import register


def documented_verify():
    text = (ROOT / "docs" / "webhooks.md").read_text()
    [code] = re.findall(r"```python\n(.*?)```", text, re.S)
    scope = {}
    exec(compile(code, "docs/webhooks.md", "exec"), scope)  # noqa: S102 (our own document)
    return scope["verify"]


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


def test_herald_signing_agrees_with_the_snippet():
    verify = documented_verify()
    header = signing.sign("whsec_agreeing-secret", b'{"id":"1-0"}')
    assert verify("whsec_agreeing-secret", b'{"id":"1-0"}', header)
    assert signing.verify("whsec_agreeing-secret", b'{"id":"1-0"}', header)
    assert not signing.verify("whsec_agreeing-secret", b'{"id":"1-1"}', header)
