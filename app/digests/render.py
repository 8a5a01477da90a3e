"""The emails: a digest of one window, or one critical notification on its own.

Both are multipart (plain text and HTML) from the Jinja2 templates in
``templates/email/``; the HTML is autoescaped, so notification text is always
text. Each email's Message-ID is built from its idempotency key, so the one
duplicate a crash can cause (see workers/digest.py) is recognisable as such.
"""
import time
from collections import defaultdict
from email.message import EmailMessage
from email.utils import formatdate

from jinja2 import Environment, FileSystemLoader, select_autoescape

from app.settings import ROOT
from app.stream.envelope import SEVERITIES

SHOW_ITEMS = 10
_env = Environment(loader=FileSystemLoader(str(ROOT / "templates" / "email")),
                   autoescape=select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True,
                   keep_trailing_newline=True)


def _message(subject, sender, to, idempotency_key, text, html):
    message = EmailMessage()
    message["Subject"] = subject
    if sender:
        message["From"] = sender
    message["To"] = to
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = f"<{idempotency_key}@herald>"
    message.set_content(text)
    message.add_alternative(html, subtype="html")
    return message


def digest_context(record, window, counts, items, total, schedule, base_url):
    """What the digest templates show."""
    by_topic = defaultdict(dict)
    for (topic, severity), count in counts.items():
        by_topic[topic][severity] = count
    by_severity = {s: sum(c for (_, sev), c in counts.items() if sev == s) for s in SEVERITIES}
    shown = items[:SHOW_ITEMS]
    return {
        "email": record["email"], "total": total, "until": schedule.local(window),
        "timezone": record["timezone"], "topics": sorted(by_topic.items()),
        "severities": [s for s in reversed(SEVERITIES) if by_severity[s]],
        "by_severity": by_severity, "items": shown, "more": total - len(shown),
        "base_url": base_url.rstrip("/") + "/", "subscribed": ", ".join(record["topics"]),
    }


def digest_email(record, window, counts, items, total, schedule, sender, base_url, key):
    context = digest_context(record, window, counts, items, total, schedule, base_url)
    worst = context["severities"][0] if context["severities"] else "info"
    alarm = ""
    if worst in ("critical", "error"):
        alarm = f" ({context['by_severity'][worst]} {worst})"
    plural = "s" if total != 1 else ""
    subject = (f"Herald digest: {total} notification{plural}{alarm}"
               f" until {context['until']:%Y-%m-%d %H:%M} {record['timezone']}")
    return _message(subject, sender, record["email"], key,
                    _env.get_template("digest.txt").render(context),
                    _env.get_template("digest.html").render(context))


def critical_email(record, envelope, sender, base_url, key):
    context = {"n": envelope, "base_url": base_url.rstrip("/") + "/", "email": record["email"]}
    return _message(f"[critical] {envelope['title']}", sender, record["email"], key,
                    _env.get_template("critical.txt").render(context),
                    _env.get_template("critical.html").render(context))


def preview(client, record, base_url):
    """The digest ``record`` would get for its earliest open window, as (message, window, total).

    The message is None when nothing has been collected yet; the window is
    then the next due time.
    """
    from app.digests import windows
    from app.digests.store import schedule_of
    schedule = schedule_of(record)
    open_windows = client.zrange(windows.windows_key(record["id"]), 0, 0)
    if not open_windows:
        return None, schedule.next_due(time.time()), 0
    window = float(open_windows[0])
    counts, items, total = windows.read(client, record["id"], window)
    message = digest_email(record, window, counts, items, total, schedule, None, base_url,
                           windows.digest_key(record["id"], window))
    return message, window, total


def parts(message):
    """(text, html) bodies of a multipart message."""
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    return text, html
