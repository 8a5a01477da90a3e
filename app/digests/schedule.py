"""When digests are due: ``hourly``, ``daily@HH:MM`` or a five-field cron expression,
all in wall-clock time of an IANA time zone.

:func:`next_due` gives the first due instant strictly after a moment, as UNIX
seconds. Daylight-saving rules, the same for every kind:

- a wall-clock time that does not exist (the spring-forward gap, e.g. 02:30
  in New York on 8 March 2026) fires shifted forward by the gap (03:30 EDT);
- a wall-clock time that happens twice (the fall-back hour) fires once, at
  its first occurrence.

Cron expressions are parsed and walked by cronsim (minute hour day-of-month
month day-of-week; names, ranges, lists, steps; a day matching either
restricted day field matches, as in cron), in the zone's wall-clock time;
each wall-clock time it yields becomes an instant by the rules above.
"""
import re
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

DAILY_RE = re.compile(r"daily@([01][0-9]|2[0-3]):([0-5][0-9])\Z")
# An IANA key: relative path segments of letters, digits, '_', '+', '-' (the longest
# real name is 32 characters). Checked before ZoneInfo sees it: ZoneInfo raises OSError
# ("File name too long") for a 10,000-character name, which is no outage.
ZONE_RE = re.compile(r"[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*\Z")
ZONE_MOST = 64
FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")


class ScheduleError(ValueError):
    """A schedule or time zone that cannot be used; the message says why."""


def zone(name):
    """The IANA time zone ``name``; raises ScheduleError (never the lookup's own
    OSError, which callers would take for Redis being away)."""
    refusal = ScheduleError(f"timezone: {str(name)[:ZONE_MOST]!r} is not an IANA time zone "
                            "such as Europe/Paris")
    if not isinstance(name, str) or len(name) > ZONE_MOST or not ZONE_RE.match(name):
        raise refusal
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise refusal from None


class Schedule:
    """A parsed schedule; :meth:`next_due` is the only thing it does."""

    def __init__(self, text, timezone_name):
        if not isinstance(text, str):
            raise ScheduleError("schedule: must be 'hourly', 'daily@HH:MM' or a cron expression")
        self.text = text.strip()
        self.tz = zone(timezone_name)
        daily = DAILY_RE.match(self.text)
        if self.text == "hourly":
            self.cron = "0 * * * *"
        elif daily:
            self.cron = f"{int(daily.group(2))} {int(daily.group(1))} * * *"
        else:
            if len(self.text.split()) != len(FIELDS):
                raise ScheduleError(
                    "schedule: must be 'hourly', 'daily@HH:MM' or a five-field cron expression")
            self.cron = self.text
        try:
            CronSim(self.cron, datetime(2026, 1, 1))
        except CronSimError as exc:
            field = str(exc).removeprefix("Bad ")
            raise ScheduleError(f"schedule: cron {field} field of {self.text!r} is not "
                                f"understood, out of range, or never matches") from None

    def next_due(self, after):
        """The first due moment strictly after ``after`` (UNIX seconds), as UNIX seconds.

        The walk starts a day before ``after`` in wall-clock time, so that a
        time shifted forward out of the spring-forward gap is not missed.
        """
        local = datetime.fromtimestamp(after, UTC).astimezone(self.tz)
        start = datetime.combine(local.date() - timedelta(days=1), time(0, 0)) - timedelta(minutes=1)
        for wall in CronSim(self.cron, start):
            # fold=0: a time in the gap takes the offset before it (shifted forward);
            # a time that happens twice is its first occurrence.
            moment = wall.replace(tzinfo=self.tz).timestamp()
            if moment > after:
                return moment
        raise ScheduleError(f"schedule: {self.text!r} never fires")  # pragma: no cover

    def local(self, moment):
        """``moment`` (UNIX seconds) as a local datetime in the schedule's zone."""
        return datetime.fromtimestamp(moment, UTC).astimezone(self.tz)


# cron-descriptor's German leaves the names of days and months in English.
GERMAN_NAMES = {
    "Monday": "Montag", "Tuesday": "Dienstag", "Wednesday": "Mittwoch", "Thursday": "Donnerstag",
    "Friday": "Freitag", "Saturday": "Samstag", "Sunday": "Sonntag", "January": "Januar",
    "February": "Februar", "March": "März", "May": "Mai", "June": "Juni", "July": "Juli",
    "October": "Oktober", "December": "Dezember",
}
_ENGLISH_NAMES = re.compile(r"\b(" + "|".join(GERMAN_NAMES) + r")\b")


def describe(text, language="en"):
    """The schedule in words in ``language`` ("en" or "de"), e.g. "At 08:00, only on
    Monday" or "Um 08:00, nur am Montag" (cron-descriptor, its names made German)."""
    from cron_descriptor import Options, get_description
    german = language == "de"
    text = text.strip()
    if text == "hourly":
        return "Stündlich, zur vollen Stunde" if german else "Every hour, on the hour"
    daily = DAILY_RE.match(text)
    if daily:
        at = f"{daily.group(1)}:{daily.group(2)}"
        return f"Täglich um {at}" if german else f"Every day at {at}"
    options = Options()
    options.use_24hour_time_format = True
    options.locale_code = "de_DE" if german else "en_US"
    words = get_description(text, options)
    return _ENGLISH_NAMES.sub(lambda m: GERMAN_NAMES[m.group(0)], words) if german else words


def check(text, timezone_name):
    """Raise ScheduleError unless the schedule and zone are usable (and fire at all)."""
    Schedule(text, timezone_name).next_due(datetime(2026, 1, 1, tzinfo=UTC).timestamp())

