"""``flask --app wsgi webhooks ...``: register, list, delete, retry and rotate the secret of
webhook endpoints."""
import click
from flask.cli import AppGroup

from app.cli.common import fail, on_redis
from app.stream.envelope import SEVERITIES

webhooks = AppGroup("webhooks", help="Webhook endpoints (notifications POSTed to URLs).")


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
        record = on_redis(store.create, data, "cli")
    except store.WebhookError as exc:
        fail(str(exc))
    click.echo(f"created webhook {record['id']}")
    click.echo(f"secret (shown only this once): {record['secret']}")


@webhooks.command("list")
def webhooks_list():
    """Every webhook: id, URL, topics, min severity, and its deliveries' state."""
    from app.webhooks import store
    records = on_redis(store.list_all)
    if not records:
        click.echo("no webhooks", err=True)
    for r in records:
        s = on_redis(store.state, r["id"])
        error = f"  last error: {s['last_error']}" if s["last_error"] else ""
        click.echo(f"{r['id']}  {r['url']}  {','.join(r['topics'])}  {r['min_severity']}"
                   f"{'  private' if r['private'] else ''}  pending {s['pending']}, parked "
                   f"{s['parked']}, delivered {s['delivered']}{error}")


@webhooks.command("delete")
@click.argument("endpoint_id")
def webhooks_delete(endpoint_id):
    """Delete webhook ENDPOINT_ID, with what it has queued and parked."""
    from app.webhooks import store
    if not on_redis(store.delete, endpoint_id):
        fail(f"no webhook {endpoint_id!r} (see `webhooks list`)")
    click.echo(f"deleted webhook {endpoint_id}")


@webhooks.command("retry")
@click.argument("endpoint_id")
def webhooks_retry(endpoint_id):
    """Deliver ENDPOINT_ID's parked (failed) deliveries again, before what is queued."""
    from app.webhooks import store
    moved = on_redis(store.requeue_parked, endpoint_id)
    if moved is None:
        fail(f"no webhook {endpoint_id!r} (see `webhooks list`)")
    click.echo(f"requeued {moved} parked deliver{'y' if moved == 1 else 'ies'}")


@webhooks.command("rotate")
@click.argument("endpoint_id")
@click.option("--secret", help="The new signing secret (default: Herald makes one).")
@click.option("--overlap", type=float, default=None,
              help="Seconds the old secret signs too (default 86400; 0: it stops now).")
def webhooks_rotate(endpoint_id, secret, overlap):
    """Give ENDPOINT_ID a new signing secret; the old one signs too for a while."""
    import time

    from app.webhooks import rotation, store
    try:
        rotated = on_redis(rotation.rotate, endpoint_id, secret, overlap)
    except store.WebhookError as exc:
        fail(str(exc))
    if rotated is None:
        fail(f"no webhook {endpoint_id!r} (see `webhooks list`)")
    click.echo(f"new secret (shown only this once): {rotated['secret']}")
    if rotated["previous_until"]:
        until = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(rotated["previous_until"]))
        click.echo(f"the old secret signs too until {until}")
    else:
        click.echo("the old secret no longer signs")
