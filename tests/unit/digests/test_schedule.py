"""Digest schedules across time zones and daylight-saving changes."""
from datetime import datetime

import pytest

from app.digests.schedule import Schedule, ScheduleError, check


def dues(schedule, zone, start, count=3):
    plan = Schedule(schedule, zone)
    moment = datetime.fromisoformat(start).timestamp()
    found = []
    for _ in range(count):
        moment = plan.next_due(moment)
        found.append(plan.local(moment).isoformat())
    return found


def test_hourly_follows_the_zones_own_hours():
    assert dues("hourly", "UTC", "2026-11-21T10:10:00+00:00") == [
        "2026-11-21T11:00:00+00:00", "2026-11-21T12:00:00+00:00", "2026-11-21T13:00:00+00:00"]
    # India is UTC+5:30: its hours start at half past, UTC.
    assert dues("hourly", "Asia/Kolkata", "2026-11-21T10:10:00+00:00", 1) == [
        "2026-11-21T16:00:00+05:30"]


def test_daily_in_different_zones_is_different_instants():
    paris = dues("daily@09:00", "Europe/Paris", "2026-11-21T00:00:00+00:00", 1)
    tokyo = dues("daily@09:00", "Asia/Tokyo", "2026-11-21T00:00:00+00:00", 1)
    assert paris == ["2026-11-21T09:00:00+01:00"]
    assert tokyo == ["2026-11-22T09:00:00+09:00"]  # 00:00 UTC is 09:00 there: strictly after


def test_spring_forward_gap_fires_shifted_forward():
    # New York skips 02:00-03:00 on 8 March 2026.
    assert dues("daily@02:30", "America/New_York", "2026-03-07T12:00:00+00:00") == [
        "2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"]


def test_fall_back_repeated_time_fires_once():
    # New York lives 01:00-02:00 twice on 1 November 2026.
    assert dues("daily@01:30", "America/New_York", "2026-10-31T12:00:00+00:00") == [
        "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00", "2026-11-03T01:30:00-05:00"]
    hours = dues("hourly", "America/New_York", "2026-11-01T04:30:00+00:00", 3)  # 00:30 EDT
    assert hours == ["2026-11-01T01:00:00-04:00", "2026-11-01T02:00:00-05:00",
                     "2026-11-01T03:00:00-05:00"]


def test_daily_keeps_local_time_across_the_change_in_europe():
    assert dues("daily@08:00", "Europe/Berlin", "2026-03-28T12:00:00+00:00") == [
        "2026-03-29T08:00:00+02:00", "2026-03-30T08:00:00+02:00", "2026-03-31T08:00:00+02:00"]


@pytest.mark.parametrize("expression,start,expected", [
    ("*/20 9-10 * * mon-fri", "2026-11-21T10:10:00+00:00",   # a Saturday
     ["2026-11-23T09:00:00+01:00", "2026-11-23T09:20:00+01:00", "2026-11-23T09:40:00+01:00"]),
    ("0 12 1 * *", "2026-11-21T00:00:00+00:00",
     ["2026-12-01T12:00:00+01:00", "2027-01-01T12:00:00+01:00", "2027-02-01T12:00:00+01:00"]),
    ("15 6 * jan,jul sun", "2026-11-21T00:00:00+00:00",
     ["2027-01-03T06:15:00+01:00", "2027-01-10T06:15:00+01:00", "2027-01-17T06:15:00+01:00"]),
    ("0 0 13 * 5", "2026-11-01T00:00:00+00:00",  # the 13th OR a Friday
     ["2026-11-06T00:00:00+01:00", "2026-11-13T00:00:00+01:00", "2026-11-20T00:00:00+01:00"]),
    ("0 0 29 2 *", "2026-01-01T00:00:00+00:00",
     ["2028-02-29T00:00:00+01:00", "2032-02-29T00:00:00+01:00", "2036-02-29T00:00:00+01:00"]),
])
def test_cron_expressions(expression, start, expected):
    assert dues(expression, "Europe/Paris", start) == expected


@pytest.mark.parametrize("schedule,zone,words", [
    ("weekly", "UTC", "schedule:"),
    ("daily@25:00", "UTC", "schedule:"),
    ("61 * * * *", "UTC", "minute field"),
    ("* * * * * *", "UTC", "five-field"),
    ("0 0 31 2 *", "UTC", "day-of-month field of .* or never matches"),
    ("hourly", "Mars/Olympus", "timezone:"),
    ("hourly", "A" * 10_000, "timezone:"),          # ZoneInfo raises OSError for this one
    ("hourly", "Europe/../../etc/passwd", "timezone:"),
    ("hourly", None, "timezone:"),
    (5, "UTC", "schedule:"),
])
def test_bad_schedules_are_refused_naming_the_field(schedule, zone, words):
    with pytest.raises(ScheduleError, match=words):
        check(schedule, zone)
