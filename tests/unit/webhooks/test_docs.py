"""docs/webhooks.md's verification snippet, run as written against Herald's own signing
helper (against a real delivery: tests/integration/webhooks/test_docs.py)."""
import re

from app.webhooks import signing
from tests.support import ROOT


def documented_verify():
    text = (ROOT / "docs" / "webhooks.md").read_text()
    [code] = re.findall(r"```python\n(.*?)```", text, re.S)
    scope = {}
    exec(compile(code, "docs/webhooks.md", "exec"), scope)  # noqa: S102 (our own document)
    return scope["verify"]


def test_herald_signing_agrees_with_the_snippet():
    verify = documented_verify()
    header = signing.sign("whsec_agreeing-secret", b'{"id":"1-0"}')
    assert verify("whsec_agreeing-secret", b'{"id":"1-0"}', header)
    assert signing.verify("whsec_agreeing-secret", b'{"id":"1-0"}', header)
    assert not signing.verify("whsec_agreeing-secret", b'{"id":"1-1"}', header)
