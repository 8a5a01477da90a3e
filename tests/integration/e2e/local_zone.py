"""A browser context in a time zone far from UTC, for pages that must show local times.

Import ``context`` into a test module to replace tests/integration/e2e/conftest.py's for
that module: the same Content-Security-Policy check, in Asia/Kathmandu
(UTC+05:45, no daylight saving) and en-US, so that a time shown in UTC, or
in the server's zone, shows up as wrong.
"""
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests.integration.e2e.conftest import CSP_REPORTER

ZONE = "Asia/Kathmandu"


@pytest.fixture
def context(browser):
    context = browser.new_context(timezone_id=ZONE, locale="en-US")
    violations = []
    context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    context.add_init_script(CSP_REPORTER)
    yield context
    context.close()
    assert violations == [], f"Content-Security-Policy violations: {violations}"


def local(iso):
    """``iso`` as the pages show it in ZONE (Intl, en-US, medium date, short time)."""
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(ZoneInfo(ZONE))
    return f"{moment:%b} {moment.day}, {moment.year}, {moment.hour % 12 or 12}:{moment:%M %p}"


def assert_local_times(locator, count):
    """``count`` <time> elements under ``locator``, each showing its datetime in ZONE.

    Waits, as every other check on a page does: a page's script puts the local time in
    after the page has arrived, so its text is the server's UTC until then, and a
    check that reads it at once races that script (it failed one CI run so).
    """
    times = locator.locator("time")
    expect(times).to_have_count(count)
    for i in range(count):
        element = times.nth(i)
        # The same instant in any ISO form: the script rewrites the attribute too.
        # to_have_text folds ICU's narrow and no-break spaces as it folds any space.
        expect(element).to_have_text(local(element.get_attribute("datetime")))
