"""``flask --app wsgi notify ...``: publish a notification, or JSON lines from stdin."""
import sys

import click
from flask.cli import with_appcontext

from app.cli.common import fail
from app.stream import envelope as rules
from app.stream import strict_json
from app.stream.envelope import KINDS, SEVERITIES, EnvelopeError
from app.stream.publish import BusUnavailable, IdempotencyConflict
from app.web import extensions


@click.command("notify")
@click.argument("topic", required=False)
@click.argument("title", required=False)
@click.option("--stdin", "from_stdin", is_flag=True,
              help="Publish the notifications given on standard input instead, one JSON "
                   "envelope a line, checked all before any is stored; prints their ids.")
@click.option("--body", help="Plain-text body, up to 4,000 characters.")
@click.option("--severity", type=click.Choice(SEVERITIES), default="info", show_default=True)
@click.option("--kind", type=click.Choice(KINDS), default="alert", show_default=True,
              help="alert: for people; data: a record changed, for programs (never "
                   "shown in the inbox).")
@click.option("--user", help="Make the notification private to this user.")
@click.option("--data", "data_json", help="A JSON object of extra data.")
@click.option("--correlation-id", help="Ties notifications of one run together.")
@click.option("--url", help="Where it leads: an absolute http(s) URL or a path starting with /.")
@click.option("--idempotency-key",
              help="Store it at most once under this key (a day): safe to rerun after a failure.")
@with_appcontext
def notify(topic, title, from_stdin, body, severity, kind, user, data_json, correlation_id, url,
           idempotency_key):
    """Publish a notification on TOPIC with TITLE; prints its id.

    With --stdin, publish JSON lines from standard input instead (batches of 100)."""
    if from_stdin:
        if topic or title:
            fail("give either TOPIC and TITLE, or --stdin, not both")
        return _notify_lines(sys.stdin.buffer, idempotency_key)
    if not (topic and title):
        fail("TOPIC and TITLE are required (or --stdin for JSON lines)")
    envelope = {"topic": topic, "title": title, "severity": severity, "kind": kind, "body": body,
                "user": user, "correlation_id": correlation_id, "url": url}
    if data_json is not None:
        try:
            envelope["data"] = strict_json.loads(data_json)
        except strict_json.JSONError as exc:
            fail(f"--data: {exc}")
    envelope = {k: v for k, v in envelope.items() if v is not None}
    try:
        published = extensions.herald().bus.publish_envelope(
            envelope, idempotency_key)
    except (EnvelopeError, BusUnavailable, IdempotencyConflict) as exc:
        fail(str(exc))
    click.echo(published["id"])


MAX_LINES = 100_000


def _notify_lines(stream, idempotency_key):
    """Check every line first (a bad one names its line and stores nothing), then
    publish in batches of 100, all or none each, under ``KEY:batch-N`` when keyed.

    ``stream`` gives bytes: a line that is not UTF-8 is named like any other bad
    line, where a text stream would have raised mid-iteration."""
    envelopes = []
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        if len(envelopes) == MAX_LINES:
            fail(f"stdin: at most {MAX_LINES} notifications at once")
        try:
            envelope = strict_json.loads(line.decode())
        except UnicodeDecodeError:
            fail(f"line {number}: is not UTF-8")
        except strict_json.JSONError as exc:
            fail(f"line {number}: {exc}")
        try:
            rules.validate(envelope)
        except EnvelopeError as exc:
            fail(f"line {number}: {exc}")
        envelopes.append(envelope)
    bus = extensions.herald().bus
    for start in range(0, len(envelopes), 100):
        key = f"{idempotency_key}:batch-{start // 100}" if idempotency_key else None
        try:
            published, _ = bus.publish_envelopes(envelopes[start:start + 100], key)
        except (EnvelopeError, BusUnavailable, IdempotencyConflict) as exc:
            fail(f"after {start} stored: {exc}")
        for answer in published["notifications"]:
            click.echo(answer["id"])
