"""Flask commands: ``flask --app wsgi users|apikeys|notify|spark ...`` (and, in
cli_outbound.py, ``digest`` and ``webhooks``: what Herald sends out).

Each command reports a bad argument or an unreachable Redis as a one-line
error and a non-zero exit, never a traceback.
"""
import json
import sys
import time

import click
from flask import current_app
from flask.cli import AppGroup, with_appcontext

from app.users import accounts
from app.stream.publish import BusUnavailable, IdempotencyConflict
from app.stream import envelope as rules
from app.stream.envelope import SEVERITIES, EnvelopeError
from app.redis_client import UNAVAILABLE

users = AppGroup("users", help="Manage user accounts.")
apikeys = AppGroup("apikeys", help="Manage publisher API keys.")
spark = AppGroup("spark", help="Run Spark jobs.")


def _redis():
    return current_app.extensions["herald.redis"]


def _fail(message):
    raise click.ClickException(message)


def _when(unix_time):
    """A creation time for a listing: UTC, or "-" when unknown."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(unix_time)) if unix_time else "-"


def _accounts(action, *args, **kwargs):
    """Run an accounts function on Herald's Redis; a refusal or an unreachable
    Redis becomes a one-line error."""
    try:
        return action(_redis(), *args, **kwargs)
    except accounts.AccountError as exc:
        _fail(str(exc))
    except UNAVAILABLE as exc:
        _fail(f"Redis is unreachable: {exc}")


@users.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="Give the user the admin role.")
@click.option("--password", prompt=True, hide_input=True, confirmation_prompt=True,
              help="The password (asked for when not given).")
def create_user(name, admin, password):
    """Create user NAME."""
    _accounts(accounts.create_user, name, password, admin=admin)
    click.echo(f"created {'admin' if admin else 'user'} {name}")


@users.command("list")
def list_users():
    """List the users: name, role and when each was created."""
    found = _accounts(accounts.list_users)
    for user in found:
        role = "admin" if user["admin"] else "user"
        click.echo(f"{user['name']}\t{role}\tcreated {_when(user['created'])}")
    if not found:
        click.echo("no users", err=True)


@users.command("set-password")
@click.argument("name")
@click.option("--password", prompt="New password", hide_input=True, confirmation_prompt=True,
              help="The new password (asked for when not given).")
def set_password(name, password):
    """Set user NAME's password; the tokens they hold stop working."""
    _accounts(accounts.set_password, name, password)
    click.echo(f"set the password of {name}")


@users.command("delete")
@click.argument("name")
@click.confirmation_option(prompt="Delete this user, with their subscriptions, read state "
                                  "and digests?")
def delete_user(name):
    """Delete user NAME: account, subscriptions, read state and digests; their
    sessions, tokens and open connections end at once."""
    from app.digests import store
    _accounts(accounts.delete_user, name)
    for record in _accounts(store.list_all, owner=name):
        _accounts(store.delete, record["id"], name)
    click.echo(f"deleted user {name}")


@apikeys.command("create")
@click.argument("name")
def create_api_key(name):
    """Create a publisher API key NAME; the key is printed once and not kept."""
    key = _accounts(accounts.create_api_key, name)
    click.echo(key)


@apikeys.command("list")
def list_api_keys():
    """List the API keys: name and when each was created (keys themselves are not kept)."""
    keys = _accounts(accounts.list_api_keys)
    for key in keys:
        click.echo(f"{key['name']}\tcreated {_when(key['created'])}")
    if not keys:
        click.echo("no API keys", err=True)


@apikeys.command("revoke")
@click.argument("name")
def revoke_api_key(name):
    """Revoke API key NAME: requests that carry it are refused from now on."""
    _accounts(accounts.revoke_api_key, name)
    click.echo(f"revoked API key {name}")


@users.command("revoke-tokens")
@click.argument("name")
def revoke_tokens(name):
    """Void every token issued so far to user NAME (they sign in again for new ones)."""
    _accounts(accounts.revoke_tokens, name)
    click.echo(f"revoked the tokens of {name}")


@click.command("notify")
@click.argument("topic", required=False)
@click.argument("title", required=False)
@click.option("--stdin", "from_stdin", is_flag=True,
              help="Publish the notifications given on standard input instead, one JSON "
                   "envelope a line, checked all before any is stored; prints their ids.")
@click.option("--body", help="Plain-text body, up to 4,000 characters.")
@click.option("--severity", type=click.Choice(SEVERITIES), default="info", show_default=True)
@click.option("--user", help="Make the notification private to this user.")
@click.option("--data", "data_json", help="A JSON object of extra data.")
@click.option("--correlation-id", help="Ties notifications of one run together.")
@click.option("--url", help="Where it leads: an absolute http(s) URL or a path starting with /.")
@click.option("--idempotency-key",
              help="Store it at most once under this key (a day): safe to rerun after a failure.")
@with_appcontext
def notify(topic, title, from_stdin, body, severity, user, data_json, correlation_id, url,
           idempotency_key):
    """Publish a notification on TOPIC with TITLE; prints its id.

    With --stdin, publish JSON lines from standard input instead (batches of 100)."""
    if from_stdin:
        if topic or title:
            _fail("give either TOPIC and TITLE, or --stdin, not both")
        return _notify_lines(sys.stdin, idempotency_key)
    if not (topic and title):
        _fail("TOPIC and TITLE are required (or --stdin for JSON lines)")
    envelope = {"topic": topic, "title": title, "severity": severity, "body": body,
                "user": user, "correlation_id": correlation_id, "url": url}
    if data_json is not None:
        try:
            envelope["data"] = json.loads(data_json)
        except ValueError as exc:
            _fail(f"--data: is not valid JSON ({exc})")
    envelope = {k: v for k, v in envelope.items() if v is not None}
    try:
        published = current_app.extensions["herald.bus"].publish_envelope(
            envelope, idempotency_key)
    except (EnvelopeError, BusUnavailable, IdempotencyConflict) as exc:
        _fail(str(exc))
    click.echo(published["id"])


MAX_LINES = 100_000


def _notify_lines(stream, idempotency_key):
    """Check every line first (a bad one names its line and stores nothing), then
    publish in batches of 100, all or none each, under ``KEY:batch-N`` when keyed."""
    envelopes = []
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        if len(envelopes) == MAX_LINES:
            _fail(f"stdin: at most {MAX_LINES} notifications at once")
        try:
            envelope = json.loads(line)
        except ValueError as exc:
            _fail(f"line {number}: is not valid JSON ({exc})")
        try:
            rules.validate(envelope)
        except EnvelopeError as exc:
            _fail(f"line {number}: {exc}")
        envelopes.append(envelope)
    bus = current_app.extensions["herald.bus"]
    for start in range(0, len(envelopes), 100):
        key = f"{idempotency_key}:batch-{start // 100}" if idempotency_key else None
        try:
            published, _ = bus.publish_envelopes(envelopes[start:start + 100], key)
        except (EnvelopeError, BusUnavailable, IdempotencyConflict) as exc:
            _fail(f"after {start} stored: {exc}")
        for answer in published["notifications"]:
            click.echo(answer["id"])


@spark.command("rollup")
@click.option("--archive", help="The archive to read (default: ARCHIVE_DIR, var/archive).")
@click.option("--out", help="Where to write (default: ROLLUP_DIR, var/rollup).")
@click.option("--master", help="Spark master URL (default: SPARK_MASTER or local[*]).")
@click.option("--user", help="Make the job's notifications private to this user.")
def spark_rollup(archive, out, master, user):
    """Run the rollup job in the foreground; its progress shows live in Herald."""
    import subprocess

    from app.settings import ROOT
    from app.spark.launcher import rollup_command
    config = current_app.config
    command = rollup_command(archive or config["ARCHIVE_DIR"], out or config["ROLLUP_DIR"],
                             user=user, master=master)
    raise SystemExit(subprocess.call(command, cwd=ROOT))


def init_app(app):
    from app.cli_outbound import digest, webhooks
    app.cli.add_command(webhooks)
    app.cli.add_command(digest)
    app.cli.add_command(spark)
    app.cli.add_command(users)
    app.cli.add_command(apikeys)
    app.cli.add_command(notify)
