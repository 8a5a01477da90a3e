"""The exact content of both parts of a digest email, and of a critical one."""
from app.digests import render
from app.digests.schedule import Schedule

RECORD = {"id": "0123456789ab", "owner": "ada", "email": "ops@example.com",
          "topics": ["ops", "billing"], "min_severity": "info", "schedule": "daily@09:00",
          "timezone": "Europe/Paris", "enabled": True, "critical_now": False}
WINDOW = 1795248000.0  # 2026-11-21 09:00 Paris (08:00 UTC)


def envelope(n, topic, severity, title, ms):
    return {"id": f"{ms}-{n}", "topic": topic, "title": title, "severity": severity,
            "ts": f"2026-11-21T07:{n:02d}:00.000Z"}


ITEMS = [envelope(1, "ops.db", "critical", "Primary <db> down", 1795244460000),
         envelope(2, "ops.deploy", "error", "Deploy & rollback", 1795244520000),
         envelope(3, "billing.invoice", "info", "Invoice 42 sent", 1795244580000)]
COUNTS = {("ops.db", "critical"): 1, ("ops.deploy", "error"): 2, ("ops.deploy", "info"): 9,
          ("billing.invoice", "info"): 2}


def make():
    return render.digest_email(RECORD, WINDOW, COUNTS, ITEMS, 14,
                               Schedule("daily@09:00", "Europe/Paris"), "Herald <h@example.com>",
                               "http://herald.example/", "digest-0123456789ab-1795248000")


def test_headers():
    message = make()
    assert message["Subject"] == ("Herald digest: 14 notifications (1 critical) "
                                  "until 2026-11-21 09:00 Europe/Paris")
    assert message["To"] == "ops@example.com" and message["From"] == "Herald <h@example.com>"
    assert message["Message-ID"] == "<digest-0123456789ab-1795248000@herald>"
    assert message.get_content_type() == "multipart/alternative"


def test_plain_text_part():
    text, _ = render.parts(make())
    assert text == """Herald digest for ops@example.com
14 notifications until 2026-11-21 09:00 (Europe/Paris), topics: ops, billing

By topic and severity:
  billing.invoice: info 2
  ops.db: critical 1
  ops.deploy: error 2, info 9

Most severe and latest:
  [critical] 2026-11-21 07:01 UTC  ops.db  Primary <db> down
  [error] 2026-11-21 07:02 UTC  ops.deploy  Deploy & rollback
  [info] 2026-11-21 07:03 UTC  billing.invoice  Invoice 42 sent
  and 11 more.

Open Herald: http://herald.example/
"""


def test_html_part_escapes_every_text():
    _, html = render.parts(make())
    assert html == """<!doctype html>
<html><body style="font-family: system-ui, sans-serif; color: #1d2330;">
<h2 style="margin: 0 0 .3em;">Herald digest</h2>
<p>14 notifications until 2026-11-21 09:00 (Europe/Paris), topics: ops, billing</p>
<table cellpadding="4" style="border-collapse: collapse;">
<tr><th align="left">Topic</th><th align="right">critical</th><th align="right">error</th><th align="right">info</th></tr>
<tr><td><code>billing.invoice</code></td><td align="right">0</td><td align="right">0</td><td align="right">2</td></tr>
<tr><td><code>ops.db</code></td><td align="right">1</td><td align="right">0</td><td align="right">0</td></tr>
<tr><td><code>ops.deploy</code></td><td align="right">0</td><td align="right">2</td><td align="right">9</td></tr>
</table>
<h3>Most severe and latest</h3>
<ul>
<li><strong>[critical]</strong> 2026-11-21 07:01 UTC <code>ops.db</code> Primary &lt;db&gt; down</li>
<li><strong>[error]</strong> 2026-11-21 07:02 UTC <code>ops.deploy</code> Deploy &amp; rollback</li>
<li><strong>[info]</strong> 2026-11-21 07:03 UTC <code>billing.invoice</code> Invoice 42 sent</li>
</ul>
<p>and 11 more.</p>
<p><a href="http://herald.example/">Open Herald</a></p>
</body></html>
"""


def test_critical_email():
    item = dict(ITEMS[0], body="Failover started.\nETA 5 min.")
    message = render.critical_email(RECORD, item, None, "http://herald.example/", "critical-x-1")
    assert message["Subject"] == "[critical] Primary <db> down"
    text, html = render.parts(message)
    assert text.startswith("Critical: Primary <db> down\n\nTopic: ops.db\nTime:  2026-11-21 07:01:00 UTC\n\n"
                           "Failover started.\nETA 5 min.\n")
    assert "Primary &lt;db&gt; down" in html and "<db>" not in html
