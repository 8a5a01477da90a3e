"""docs/webhooks.md's verification snippet, run as written against Herald's own signing
helper and the Python client's ``herald_client.webhooks.verify`` (against a real delivery:
tests/integration/webhooks/test_docs.py)."""
import re
import time

import pytest

from app.webhooks import signing
from herald_client import webhooks as client_webhooks
from tests.support import ROOT

SECRET = "whsec_agreeing-secret"
BODY = b'{"id":"1-0"}'
DELIVERY = "3f2a9c01b7de.1-0"


def documented_verify():
    text = (ROOT / "docs" / "webhooks.md").read_text()
    [code] = re.findall(r"```python\n(.*?)```", text, re.S)
    scope = {}
    exec(compile(code, "docs/webhooks.md", "exec"), scope)  # noqa: S102 (our own document)
    return scope["verify"]


VERIFIERS = {"docs": documented_verify(), "herald": signing.verify,
             "client": client_webhooks.verify}


@pytest.fixture(params=sorted(VERIFIERS))
def verify(request):
    return VERIFIERS[request.param]


def test_herald_signing_agrees_with_every_verifier(verify):
    header = signing.sign(SECRET, BODY, DELIVERY)
    assert verify(SECRET, BODY, header, DELIVERY)
    assert not verify(SECRET, b'{"id":"1-1"}', header, DELIVERY)
    assert not verify("whsec_another-secret-entirely", BODY, header, DELIVERY)
    assert not verify(SECRET, BODY, "t=nonsense", DELIVERY)
    assert not verify(SECRET, BODY, signing.sign(SECRET, BODY, DELIVERY, time.time() - 600),
                      DELIVERY)


def test_a_replay_with_another_delivery_id_fails(verify):
    """A captured delivery re-sent with a new Herald-Delivery (to pass a receiver's repeat
    check) within the timestamp tolerance: the delivery id is signed, so it fails."""
    header = signing.sign(SECRET, BODY, DELIVERY)
    assert not verify(SECRET, BODY, header, "3f2a9c01b7de.1-0-again")
    assert not verify(SECRET, BODY, header, "")


def test_during_a_rotation_either_secret_verifies(verify):
    header = signing.sign(["whsec_the-new-secret-here", SECRET], BODY, DELIVERY)
    assert header.count("v1=") == 2
    assert verify(SECRET, BODY, header, DELIVERY)
    assert verify("whsec_the-new-secret-here", BODY, header, DELIVERY)
    assert not verify("whsec_a-third-secret-here", BODY, header, DELIVERY)
