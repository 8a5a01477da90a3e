"""Times in the reader's own zone: ``{{ post.created_at|localtime }}`` in a template."""
from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo, available_timezones

from flask_login import current_user

ZONES = sorted(available_timezones())


def zone():
    """The signed-in user's zone (UTC for a visitor)."""
    name = getattr(current_user, "timezone", None) or "UTC"
    return ZoneInfo(name if name in ZONES or name == "UTC" else "UTC")


def local(value):
    """A naive UTC datetime, in the reader's zone."""
    return value.replace(tzinfo=UTC).astimezone(zone())


def localtime(value, style="%d %b %Y, %H:%M"):
    return local(value).strftime(style)


def start_of_today():
    """Midnight today in the reader's zone, as the naive UTC datetime the database keeps."""
    midnight = datetime.combine(datetime.now(zone()).date(), time(), tzinfo=zone())
    return midnight.astimezone(UTC).replace(tzinfo=None)


def init_app(app):
    app.add_template_filter(localtime)
    app.add_template_filter(lambda value: local(value).isoformat(), "isotime")
    app.add_template_global(lambda: local(datetime.now(UTC).replace(tzinfo=None)).tzname(),
                            "zone_name")
