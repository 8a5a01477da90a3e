"""When digests are due: ``hourly``, ``daily@HH:MM`` or a five-field cron expression,
all in wall-clock time of an IANA time zone.

:func:`next_due` gives the first due instant strictly after a moment, as UNIX
seconds. Daylight-saving rules, the same for every kind:

- a wall-clock time that does not exist (the spring-forward gap, e.g. 02:30
  in New York on 8 March 2026) fires shifted forward by the gap (03:30 EDT);
- a wall-clock time that happens twice (the fall-back hour) fires once, at
  its first occurrence.

Cron fields: minute hour day-of-month month day-of-week, each ``*``, a
number, a range ``a-b``, a list ``a,b``, with an optional step ``/n``;
months and days may be named (``jan``, ``mon``); day-of-week 0 and 7 are
Sunday. When both day fields are restricted a day matching either one
matches (cron's rule).
"""
import re
from datetime import datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAILY_RE = re.compile(r"daily@([01][0-9]|2[0-3]):([0-5][0-9])\Z")
MONTHS = {n: i for i, n in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
DAYS = {n: i for i, n in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
SEARCH_DAYS = 366 * 8  # long enough for "0 0 29 2 *" (29 February) to come round


class ScheduleError(ValueError):
    """A schedule or time zone that cannot be used; the message says why."""


def zone(name):
    """The IANA time zone ``name``; raises ScheduleError."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise ScheduleError(f"timezone: {name!r} is not an IANA time zone such as Europe/Paris") from None


def _field(text, low, high, names, label):
    values = set()
    for part in text.lower().split(","):
        body, _, step = part.partition("/")
        try:
            step = int(step) if step else 1
            if body == "*":
                start, end = low, high
            elif "-" in body:
                first, last = body.split("-", 1)
                start = names[first] if first in names else int(first)
                end = names[last] if last in names else int(last)
            else:
                start = names[body] if body in names else int(body)
                end = high if step > 1 and "/" in part else start
        except (ValueError, KeyError):
            raise ScheduleError(f"schedule: cron {label} field {text!r} is not understood") from None
        if step < 1 or not (low <= start <= high and low <= end <= high) or start > end:
            raise ScheduleError(f"schedule: cron {label} field {text!r} is out of range {low}-{high}")
        values.update(range(start, end + 1, step))
    return values


class Schedule:
    """A parsed schedule; :meth:`next_due` is the only thing it does."""

    def __init__(self, text, timezone_name):
        if not isinstance(text, str):
            raise ScheduleError("schedule: must be 'hourly', 'daily@HH:MM' or a cron expression")
        self.text = text.strip()
        self.tz = zone(timezone_name)
        daily = DAILY_RE.match(self.text)
        if self.text == "hourly":
            self.minutes, self.hours = {0}, set(range(24))
            self.doms, self.months, self.dows = set(range(1, 32)), set(range(1, 13)), set(range(7))
            self.dom_any = self.dow_any = True
        elif daily:
            self.minutes, self.hours = {int(daily.group(2))}, {int(daily.group(1))}
            self.doms, self.months, self.dows = set(range(1, 32)), set(range(1, 13)), set(range(7))
            self.dom_any = self.dow_any = True
        else:
            fields = self.text.split()
            if len(fields) != 5:
                raise ScheduleError(
                    "schedule: must be 'hourly', 'daily@HH:MM' or a five-field cron expression")
            self.minutes = _field(fields[0], 0, 59, {}, "minute")
            self.hours = _field(fields[1], 0, 23, {}, "hour")
            self.doms = _field(fields[2], 1, 31, {}, "day-of-month")
            self.months = _field(fields[3], 1, 12, MONTHS, "month")
            self.dows = {d % 7 for d in _field(fields[4], 0, 7, DAYS, "day-of-week")}
            self.dom_any, self.dow_any = fields[2] == "*", fields[4] == "*"

    def _day_matches(self, day):
        if day.month not in self.months:
            return False
        dom, dow = day.day in self.doms, (day.weekday() + 1) % 7 in self.dows
        if self.dom_any or self.dow_any:
            return dom and dow
        return dom or dow

    def next_due(self, after):
        """The first due moment strictly after ``after`` (UNIX seconds), as UNIX seconds."""
        start = datetime.fromtimestamp(after, timezone.utc).astimezone(self.tz).date() - timedelta(days=1)
        for offset in range(SEARCH_DAYS):
            day = start + timedelta(days=offset)
            if not self._day_matches(day):
                continue
            for hour in sorted(self.hours):
                for minute in sorted(self.minutes):
                    moment = datetime.combine(day, time(hour, minute), self.tz).timestamp()
                    if moment > after:
                        return moment
        raise ScheduleError(f"schedule: {self.text!r} never fires")

    def local(self, moment):
        """``moment`` (UNIX seconds) as a local datetime in the schedule's zone."""
        return datetime.fromtimestamp(moment, timezone.utc).astimezone(self.tz)


def check(text, timezone_name):
    """Raise ScheduleError unless the schedule and zone are usable (and fire at all)."""
    Schedule(text, timezone_name).next_due(datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp())

