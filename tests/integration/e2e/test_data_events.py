"""A live ``kind: "data"`` event in Chromium: the signed-in dashboard shows nothing of it
(no toast, no row, no count), and the alert published right after it shows as usual."""
import re

import pytest
from playwright.sync_api import expect

from tests.integration.e2e.conftest import dashboard_of_ann

WAIT = 5_000  # ms


@pytest.fixture
def dashboard(live_server, redis, page):
    return dashboard_of_ann(page, live_server, redis, "board")


def test_a_live_data_event_shows_nothing_and_the_alert_after_it_shows(dashboard, live_server,
                                                                       api_key):
    page = dashboard
    # The inbox off the screen, so what arrives stays new: the badge counts it.
    page.click("#tab-activity")
    badge, unread = page.locator("#badge .badge-count"), page.locator("#tab-inbox .tab-count")
    expect(badge).to_have_text("0")
    data = live_server.publish(api_key, topic="board.card.7", title="Card 7 changed",
                               severity="warning", kind="data", data={"id": 7, "version": 2})
    alert = live_server.publish(api_key, topic="board.card.7", title="Card 7 is overdue",
                                severity="warning")
    # In id order on one connection: once the alert is shown, the data event came first.
    expect(page.locator("#toasts .toast .title")).to_have_text(["Card 7 is overdue"],
                                                               timeout=WAIT)
    expect(badge).to_have_text("1")
    expect(unread).to_have_text("1")
    expect(page).to_have_title(re.compile(r"^\(1\) "), timeout=WAIT)  # at most once a second
    page.click("#tab-inbox")
    rows = page.locator("#feed li.notification")
    expect(rows).to_have_count(1)
    expect(page.locator(f'#feed li[data-id="{alert}"]')).to_be_visible()
    assert page.locator(f'#feed li[data-id="{data}"]').count() == 0
    page.click("#tab-activity")
    assert page.locator(f'li[data-id="{data}"]').count() == 0  # nor among the machine events
    # And after a reload (history over REST, then the replay): still only the alert.
    page.reload()
    page.wait_for_selector("#connection[data-state=connected]")
    page.click("#tab-inbox")
    expect(page.locator(f'#feed li[data-id="{alert}"]')).to_be_visible(timeout=WAIT)
    expect(rows).to_have_count(1)
    expect(unread).to_have_text("1")
    assert page.locator(f'li[data-id="{data}"]').count() == 0
