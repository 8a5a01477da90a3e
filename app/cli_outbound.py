"""Flask commands for what Herald sends out: ``digest`` (email digests) and
``webhooks`` (notifications POSTed to URLs). Registered by cli.init_app; errors
are one line and a non-zero exit, as for every command (see cli.py).
"""
import click
from flask.cli import AppGroup

from app.cli import _accounts, _fail, _redis
from app.stream.envelope import SEVERITIES

digest = AppGroup("digest", help="Email digests.")
webhooks = AppGroup("webhooks", help="Webhook endpoints (notifications POSTed to URLs).")


@digest.command("list")
def digest_list():
    """Every digest subscription, with its owner and schedule."""
    from app.digests import store
    records = store.list_all(_redis())
    if not records:
        click.echo("no digest subscriptions")
    for r in records:
        state = "enabled" if r["enabled"] else "paused"
        click.echo(f"{r['id']}  {r['owner']:<12} {r['email']:<28} {','.join(r['topics']):<24} "
                   f"{r['min_severity']:<8} {r['schedule']} {r['timezone']}  {state}"
                   f"{'  critical-now' if r['critical_now'] else ''}")


def _digest(digest_id):
    from app.digests import store
    record = store.get(_redis(), digest_id)
    if record is None:
        _fail(f"no digest subscription {digest_id!r} (see `digest list`)")
    return record


@digest.command("preview")
@click.argument("digest_id")
def digest_preview(digest_id):
    """Print the digest DIGEST_ID would get now (its plain-text part)."""
    from app.settings import herald_url
    from app.digests import render
    record = _digest(digest_id)
    message, window, _ = render.preview(_redis(), record, herald_url())
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
    from app.settings import herald_url
    from app.digests import windows
    from app.digests.send import Sender
    from app.digests.smtp import ERRORS, Smtp, SmtpUrlError
    record = _digest(digest_id)
    try:
        smtp = Smtp.from_env()
    except SmtpUrlError as exc:
        _fail(str(exc))
    if smtp is None:
        _fail("SMTP_URL is not set")
    sender = Sender(_redis(), smtp, herald_url())
    open_windows = [float(w) for w in _redis().zrange(windows.windows_key(digest_id), 0, -1)]
    try:
        sent = sum(sender.send_window(record, window) for window in open_windows)
    except ERRORS as exc:
        _fail(f"SMTP failed: {exc}; nothing was lost, the digest stays queued")
    click.echo(f"sent {sent} digest email(s) to {record['email']}" if sent else
               "nothing collected yet; nothing sent")


@webhooks.command("create")
@click.argument("url")
@click.option("--topic", "topics", multiple=True, required=True,
              help="A topic prefix it gets ('*' for all); repeat for more.")
@click.option("--min-severity", type=click.Choice(SEVERITIES), default="info", show_default=True)
@click.option("--private", is_flag=True,
              help="Send it private notifications too (never sent otherwise).")
@click.option("--secret", help="The signing secret (default: Herald makes one).")
def webhooks_create(url, topics, min_severity, private, secret):
    """Register webhook URL; prints its id and signing secret (shown only this once)."""
    from app.webhooks import store
    data = {"url": url, "topics": list(topics), "min_severity": min_severity, "private": private}
    if secret is not None:
        data["secret"] = secret
    try:
        record = _accounts(store.create, data, "cli")
    except store.WebhookError as exc:
        _fail(str(exc))
    click.echo(f"created webhook {record['id']}")
    click.echo(f"secret (shown only this once): {record['secret']}")


@webhooks.command("list")
def webhooks_list():
    """Every webhook: id, URL, topics, min severity, and its deliveries' state."""
    from app.webhooks import store
    records = _accounts(store.list_all)
    if not records:
        click.echo("no webhooks", err=True)
    for r in records:
        s = _accounts(store.state, r["id"])
        error = f"  last error: {s['last_error']}" if s["last_error"] else ""
        click.echo(f"{r['id']}  {r['url']}  {','.join(r['topics'])}  {r['min_severity']}"
                   f"{'  private' if r['private'] else ''}  pending {s['pending']}, parked "
                   f"{s['parked']}, delivered {s['delivered']}{error}")


@webhooks.command("delete")
@click.argument("endpoint_id")
def webhooks_delete(endpoint_id):
    """Delete webhook ENDPOINT_ID, with what it has queued and parked."""
    from app.webhooks import store
    if not _accounts(store.delete, endpoint_id):
        _fail(f"no webhook {endpoint_id!r} (see `webhooks list`)")
    click.echo(f"deleted webhook {endpoint_id}")


@webhooks.command("retry")
@click.argument("endpoint_id")
def webhooks_retry(endpoint_id):
    """Deliver ENDPOINT_ID's parked (failed) deliveries again, before what is queued."""
    from app.webhooks import store
    moved = _accounts(store.requeue_parked, endpoint_id)
    if moved is None:
        _fail(f"no webhook {endpoint_id!r} (see `webhooks list`)")
    click.echo(f"requeued {moved} parked deliver{'y' if moved == 1 else 'ies'}")
