"""Flask commands: ``flask --app wsgi users|apikeys|notify ...``.

Each command reports a bad argument or an unreachable Redis as a one-line
error and a non-zero exit, never a traceback.
"""
import json

import click
from flask import current_app
from flask.cli import AppGroup, with_appcontext

from . import accounts
from .bus import BusUnavailable
from .notifications import SEVERITIES, EnvelopeError
from .redis_client import UNAVAILABLE

users = AppGroup("users", help="Manage user accounts.")
apikeys = AppGroup("apikeys", help="Manage publisher API keys.")
spark = AppGroup("spark", help="Run Spark jobs.")


def _redis():
    return current_app.extensions["herald.redis"]


def _fail(message):
    raise click.ClickException(message)


@users.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="Give the user the admin role.")
@click.option("--password", prompt=True, hide_input=True, confirmation_prompt=True,
              help="The password (asked for when not given).")
def create_user(name, admin, password):
    """Create user NAME."""
    try:
        accounts.create_user(_redis(), name, password, admin=admin)
    except accounts.AccountError as exc:
        _fail(str(exc))
    except UNAVAILABLE as exc:
        _fail(f"Redis is unreachable: {exc}")
    click.echo(f"created {'admin' if admin else 'user'} {name}")


@apikeys.command("create")
@click.argument("name")
def create_api_key(name):
    """Create a publisher API key NAME; the key is printed once and not kept."""
    try:
        key = accounts.create_api_key(_redis(), name)
    except accounts.AccountError as exc:
        _fail(str(exc))
    except UNAVAILABLE as exc:
        _fail(f"Redis is unreachable: {exc}")
    click.echo(key)


@click.command("notify")
@click.argument("topic")
@click.argument("title")
@click.option("--body", help="Plain-text body, up to 4,000 characters.")
@click.option("--severity", type=click.Choice(SEVERITIES), default="info", show_default=True)
@click.option("--user", help="Make the notification private to this user.")
@click.option("--data", "data_json", help="A JSON object of extra data.")
@click.option("--correlation-id", help="Ties notifications of one run together.")
@with_appcontext
def notify(topic, title, body, severity, user, data_json, correlation_id):
    """Publish a notification on TOPIC with TITLE; prints its id."""
    envelope = {"topic": topic, "title": title, "severity": severity, "body": body,
                "user": user, "correlation_id": correlation_id}
    if data_json is not None:
        try:
            envelope["data"] = json.loads(data_json)
        except ValueError as exc:
            _fail(f"--data: is not valid JSON ({exc})")
    envelope = {k: v for k, v in envelope.items() if v is not None}
    try:
        published = current_app.extensions["herald.bus"].publish_envelope(envelope)
    except EnvelopeError as exc:
        _fail(str(exc))
    except BusUnavailable as exc:
        _fail(str(exc))
    click.echo(published["id"])


@spark.command("rollup")
@click.option("--archive", help="The archive to read (default: ARCHIVE_DIR, var/archive).")
@click.option("--out", help="Where to write (default: ROLLUP_DIR, var/rollup).")
@click.option("--master", help="Spark master URL (default: SPARK_MASTER or local[*]).")
@click.option("--user", help="Make the job's notifications private to this user.")
def spark_rollup(archive, out, master, user):
    """Run the rollup job in the foreground; its progress shows live in Herald."""
    import subprocess

    from .config import ROOT
    from .spark_jobs import rollup_command
    config = current_app.config
    command = rollup_command(archive or config["ARCHIVE_DIR"], out or config["ROLLUP_DIR"],
                             user=user, master=master)
    raise SystemExit(subprocess.call(command, cwd=ROOT))


def init_app(app):
    app.cli.add_command(spark)
    app.cli.add_command(users)
    app.cli.add_command(apikeys)
    app.cli.add_command(notify)
