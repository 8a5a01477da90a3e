"""A calm inbox in bursts (issue 38, points 3 and 8), in Chromium: one summary
toast per burst and none for what is already handled, one toast for a grouped
critical alert, a compact toast strip on a phone, and one meaning of unread on
every counter (the page's title, the header badge, the tabs)."""
import re

import pytest
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts, archive_and_snooze, read_state, subscriptions
from tests.integration.e2e.conftest import DESKTOP, PHONE, accessibility_violations, sign_in

WAIT = 10_000

# Records, from before the first toast, the most toasts ever shown at once and the
# tallest the toast area ever was (a MutationObserver: every change is looked at).
WATCH_TOASTS = """() => {
  const area = document.querySelector('#toasts');
  window.toastWatch = {most: 0, tallest: 0};
  const look = () => {
    const shown = [...area.querySelectorAll('.toast')].filter(t => t.getClientRects().length);
    window.toastWatch.most = Math.max(window.toastWatch.most, shown.length);
    window.toastWatch.tallest = Math.max(window.toastWatch.tallest, area.getBoundingClientRect().height);
  };
  new MutationObserver(look).observe(area, {childList: true, subtree: true, characterData: true});
}"""


@pytest.fixture
def ann(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["ops", "spark"], limit=10)
    return Bus(redis)


def toasts(page):
    return page.locator("#toasts .toast")


def watched(page):
    return page.evaluate("window.toastWatch")


def open_inbox(page, server, viewport):
    page.set_viewport_size(viewport)
    sign_in(page, server, "ann", "ann-password")
    page.evaluate(WATCH_TOASTS)


def test_a_burst_of_thirty_is_one_summary_toast_without_what_is_handled(live_server, ann, redis, page):
    open_inbox(page, live_server, DESKTOP)
    sent = [ann.publish("ops.burst", f"Disk {i} nearly full", severity="critical" if i < 2 else "warning")
            for i in range(30)]
    expect(page.locator("#feed li.notification")).to_have_count(30, timeout=WAIT)
    expect(toasts(page)).to_have_count(1, timeout=WAIT)
    toast = toasts(page).first
    expect(toast).to_contain_text("30 new notifications")
    expect(toast).to_contain_text("2 × critical")
    # Handled elsewhere (another tab archived ten, read five): the toast forgets them at once.
    archive_and_snooze.archive(redis, "ann", sent[20:])
    read_state.mark(redis, "ann", {"ids": sent[15:20]})
    expect(toast).to_contain_text("15 new notifications", timeout=WAIT)
    # All handled: no toast left.
    archive_and_snooze.archive(redis, "ann", sent[:15])
    expect(toasts(page)).to_have_count(0, timeout=WAIT)
    # A toast never showed for what was archived before it would show.
    late = ann.publish("ops.late", "Archived at once", severity="error")
    archive_and_snooze.archive(redis, "ann", [late])
    marker = ann.publish("ops.marker", "After it", severity="warning")
    expect(toasts(page)).to_have_count(1, timeout=WAIT)
    expect(toasts(page).first).to_contain_text("After it")
    expect(toasts(page).first).not_to_contain_text("Archived at once")
    assert marker
    assert watched(page)["most"] == 1, watched(page)
    # Escape closes it; the close button has a name.
    expect(toasts(page).first.locator("button.close")).to_have_attribute("aria-label", "Dismiss")
    toasts(page).first.locator("button.close").focus()
    page.keyboard.press("Escape")
    expect(toasts(page)).to_have_count(0)
    assert accessibility_violations(page) == []


def test_no_toast_for_the_row_in_use_or_the_open_detail(live_server, ann, page):
    open_inbox(page, live_server, DESKTOP)
    first = ann.publish("ops.disk", "Disk nearly full", severity="warning")
    expect(toasts(page)).to_have_count(1, timeout=WAIT)
    # j brings the focus to that row: it is seen there, the toast goes.
    page.locator("#feed-heading").focus()
    page.keyboard.press("j")
    expect(page.locator(f'#feed li[data-id="{first}"].current')).to_have_count(1)
    expect(toasts(page)).to_have_count(0, timeout=WAIT)
    # Open in the detail: more of the same row is seen there, no toast; another row's news is.
    page.keyboard.press("o")
    expect(page.locator("#detail h2")).to_have_text("Disk nearly full")
    ann.publish("ops.disk", "Disk nearly full", severity="warning")
    ann.publish("ops.cpu", "CPU hot", severity="warning")
    expect(toasts(page)).to_have_count(1, timeout=WAIT)
    expect(toasts(page).first.locator(".title")).to_have_text("CPU hot")
    expect(toasts(page).first.locator(".count")).to_have_count(0)
    expect(toasts(page).first).not_to_contain_text("new notifications")


def test_a_grouped_critical_alert_is_one_toast_with_its_count(live_server, ann, page):
    open_inbox(page, live_server, DESKTOP)
    for _ in range(8):
        ann.publish("ops.db", "Database down", severity="critical")
    expect(page.locator("#feed li.notification .count")).to_contain_text("×8", timeout=WAIT)
    expect(toasts(page)).to_have_count(1, timeout=WAIT)
    toast = toasts(page).first
    expect(toast.locator(".title")).to_have_text("Database down")
    expect(toast).to_contain_text("×8")
    assert watched(page)["most"] == 1, watched(page)
    toast.locator(".open-toast").click()  # opens the newest of the group
    expect(page.locator("#detail h2")).to_have_text("Database down")
    expect(toasts(page)).to_have_count(0)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_toasts_on_a_phone_take_one_compact_strip(live_server, ann, page, scheme):
    page.emulate_media(color_scheme=scheme)
    open_inbox(page, live_server, PHONE)
    for i in range(6):
        ann.publish("ops.phone", f"Queue {i} is backing up with a long title to wrap", severity="error")
    ann.publish("ops.phone", "Payments failing", severity="critical")
    expect(toasts(page)).to_have_count(1, timeout=WAIT)
    expect(toasts(page).first).to_contain_text("7 new notifications")
    box = page.locator("#toasts").bounding_box()
    assert box["height"] <= 90, box
    assert watched(page)["tallest"] <= 90, watched(page)
    # Not over the first row's actions.
    first_row = page.locator("#feed li.notification").first.bounding_box()
    assert box["y"] >= first_row["y"] + first_row["height"] or box["y"] + box["height"] <= first_row["y"]
    assert accessibility_violations(page) == []


def counters(page):
    """(title count, badge count, Inbox tab count), "" where none is shown."""
    title = re.match(r"^\((\d+)\) ", page.title())
    badge = page.locator("#badge .badge-count").inner_text().strip()
    return (title.group(1) if title else "", "" if badge == "0" else badge,
            page.locator("#tab-inbox .tab-count").inner_text().strip())


def test_title_badge_and_tabs_count_unread_alike(live_server, ann, page):
    open_inbox(page, live_server, DESKTOP)
    sent = [ann.publish("ops.count", f"Count {i}") for i in range(5)]
    expect(page.locator("#tab-inbox .tab-count")).to_have_text("5", timeout=WAIT)
    # Machine chatter (steps of a run) arrives: not unread anywhere.
    for step in range(3):
        ann.publish("spark.job.progress", "nightly running", correlation_id="run-9",
                    data={"percent": step * 30})
    expect(page.locator("#feed li.notification")).to_have_count(5)
    page.locator(f"#feed li[data-id=\"{sent[0]}\"] button.open").click()
    page.locator(f"#feed li[data-id=\"{sent[1]}\"] button.open").click()
    expect(page.locator("#tab-inbox .tab-count")).to_have_text("3", timeout=WAIT)
    expect(page).to_have_title(re.compile(r"^\(3\) "))
    assert counters(page) == ("3", "3", "3")
    expect(page.locator("#badge")).to_contain_text("3 unread")
    expect(page.locator("#badge")).not_to_contain_text("new")
    # Activity has rows but no unread count.
    expect(page.locator("#tab-activity .tab-count")).to_have_text("")
    page.click("#tab-activity")
    expect(page.locator("#feed li.notification")).to_have_count(1)
    assert counters(page) == ("3", "3", "3")
