"""``flask --app wsgi digest ...``: list, preview and send email digests now."""
import click
from flask.cli import AppGroup

from app.cli.common import fail, redis

digest = AppGroup("digest", help="Email digests.")


@digest.command("list")
def digest_list():
    """Every digest subscription, with its owner and schedule."""
    from app.digests import store
    records = store.list_all(redis())
    if not records:
        click.echo("no digest subscriptions")
    for r in records:
        state = "enabled" if r["enabled"] else "paused"
        click.echo(f"{r['id']}  {r['owner']:<12} {r['email']:<28} {','.join(r['topics']):<24} "
                   f"{r['min_severity']:<8} {r['schedule']} {r['timezone']}  {state}"
                   f"{'  critical-now' if r['critical_now'] else ''}")


def _digest(digest_id):
    from app.digests import store
    record = store.get(redis(), digest_id)
    if record is None:
        fail(f"no digest subscription {digest_id!r} (see `digest list`)")
    return record


@digest.command("preview")
@click.argument("digest_id")
def digest_preview(digest_id):
    """Print the digest DIGEST_ID would get now (its plain-text part)."""
    from app.digests import render
    from app.settings import herald_url
    record = _digest(digest_id)
    message, window, _ = render.preview(redis(), record, herald_url())
    if message is None:
        click.echo(f"nothing collected yet for {digest_id}; next due "
                   f"{render.time.strftime('%Y-%m-%d %H:%M UTC', render.time.gmtime(window))}")
        return
    click.echo(f"Subject: {message['Subject']}\nTo: {message['To']}\n")
    click.echo(render.parts(message)[0])


@digest.command("send-now")
@click.argument("digest_id")
def digest_send_now(digest_id):
    """Send DIGEST_ID's collected notifications now (needs SMTP_URL); the next window starts."""
    from app.digests import windows
    from app.digests.send import Sender
    from app.digests.smtp import ERRORS, Smtp, SmtpUrlError
    from app.settings import herald_url
    record = _digest(digest_id)
    try:
        smtp = Smtp.from_env()
    except SmtpUrlError as exc:
        fail(str(exc))
    if smtp is None:
        fail("SMTP_URL is not set")
    sender = Sender(redis(), smtp, herald_url())
    open_windows = [float(w) for w in redis().zrange(windows.windows_key(digest_id), 0, -1)]
    try:
        sent = sum(sender.send_window(record, window) for window in open_windows)
    except ERRORS as exc:
        fail(f"SMTP failed: {exc}; nothing was lost, the digest stays queued")
    click.echo(f"sent {sent} digest email(s) to {record['email']}" if sent else
               "nothing collected yet; nothing sent")
