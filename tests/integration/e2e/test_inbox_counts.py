"""Every counter of the inbox tells the true number of unread rows (issue 38, point 8):
the page's title, the header's badge and the Inbox tab say the same, also when the
page has loaded only its first page of 100 (the server counts the rest:
GET /api/notification-state/matching?unread=1&rows=1), live on a read change and
on a new arrival, and keep their number while Redis is away."""
import os
import re
import signal

import pytest
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import DESKTOP, PHONE, accessibility_violations, sign_in
from tests.integration.e2e.inbox import FEED_PAGE, expect_held
from tests.support import own_stack

WAIT = 10_000
BACK = 30_000  # ms for the page to notice Redis away, or back


@pytest.fixture
def ann(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["ops"], limit=10)
    return Bus(redis)


def expect_counts(page, n):
    """Title, badge and Inbox tab all say ``n``."""
    expect(page.locator("#badge .badge-count")).to_have_text(str(n), timeout=WAIT)
    expect(page.locator("#tab-inbox .tab-count")).to_have_text(str(n), timeout=WAIT)
    expect(page).to_have_title(re.compile(rf"^\({n}\) "), timeout=WAIT)


@pytest.mark.parametrize("size,look", [(DESKTOP, {}), (PHONE, {"locale": "de-DE", "color_scheme": "dark"})],
                         ids=["desktop", "phone-german-dark"])
def test_counters_tell_the_true_number_past_the_loaded_page(live_server, ann, contexts, size, look):
    for i in range(150):
        ann.publish("ops.k", f"item {i}")
    page = contexts(viewport=size, **look).new_page()
    sign_in(page, live_server, "ann", "ann-password")
    expect_held(page, 100, WAIT)  # one page, of which the top is drawn
    expect(page.locator("#feed li.notification")).to_have_count(FEED_PAGE, timeout=WAIT)
    expect_counts(page, 150)
    shot = "desktop" if size == DESKTOP else "phone"
    page.screenshot(path=f"/tmp/shots/counts/{shot}-150.png")

    # Mark 10 read, by keyboard: select ten rows (x, j), then Shift+I.
    page.keyboard.press("j")
    for _ in range(10):
        page.keyboard.press("x")
        page.keyboard.press("j")
    expect(page.locator("#feed li.selected")).to_have_count(10)
    page.keyboard.press("Shift+I")
    expect(page.locator("#feed li.notification.unread")).to_have_count(FEED_PAGE - 10, timeout=WAIT)
    expect_counts(page, 140)

    for i in range(3):
        ann.publish("ops.k", f"new {i}")
    expect_counts(page, 143)
    page.screenshot(path=f"/tmp/shots/counts/{shot}-143.png")
    page.keyboard.press("Escape")
    assert accessibility_violations(page) == []


def test_unloaded_rows_count_as_the_page_groups_them(live_server, ann, page):
    """Past the loaded page the server counts rows as the page shows them: eight
    alike are one row "×8", a private one counts for "For you" too."""
    ann.publish("ops.mine", "for ann", user="ann")
    for _ in range(8):
        ann.publish("ops.disk", "Disk full")
    for i in range(100):
        ann.publish("ops.k", f"item {i}")
    sign_in(page, live_server, "ann", "ann-password")
    expect_held(page, 100, WAIT)  # one page, of which the top is drawn
    expect(page.locator("#feed li.notification")).to_have_count(FEED_PAGE, timeout=WAIT)
    expect_counts(page, 102)  # 100 + the row "Disk full ×8" + the private one
    expect(page.locator("#tab-foryou .tab-count")).to_have_text("1", timeout=WAIT)


# Records every text the counters show from now on (window.countsShown), and the
# server asks for the count that failed (window.countAsksFailed).
WATCH_COUNTS = """() => {
  window.countsShown = [];
  window.countAsksFailed = 0;
  var look = function () {
    window.countsShown.push(document.querySelector('#badge .badge-count').textContent,
      document.querySelector('#tab-inbox .tab-count').textContent, document.title.split(' ')[0]);
  };
  new MutationObserver(look).observe(document.getElementById('badge'),
    {subtree: true, childList: true, characterData: true});
  new MutationObserver(look).observe(document.getElementById('tab-inbox'),
    {subtree: true, childList: true, characterData: true});
  new MutationObserver(look).observe(document.querySelector('title'), {childList: true});
  var get = herald.client.get;
  herald.client.get = function (path) {
    var asked = get.apply(this, arguments);
    if (path.indexOf('/api/notification-state/matching') === 0) {
      asked.catch(function () { window.countAsksFailed += 1; });
    }
    return asked;
  };
}"""


def test_counters_keep_their_number_while_redis_is_away(tmp_path, page):
    with own_stack(tmp_path) as (redis_server, client, server):
        accounts.create_user(client, "ann", "ann-password")
        subscriptions.add(client, "ann", ["ops"], limit=10)
        bus = Bus(client)
        for i in range(150):
            bus.publish("ops.k", f"item {i}")
        sign_in(page, server, "ann", "ann-password")
        expect_counts(page, 150)
        page.evaluate(WATCH_COUNTS)
        os.kill(redis_server.process.pid, signal.SIGSTOP)
        try:
            page.wait_for_selector("#status-banner[data-problem=redis]", timeout=BACK)
            page.evaluate("herald.views.badge.total.schedule()")  # a change: the server is asked
            page.wait_for_function("() => window.countAsksFailed > 0", timeout=BACK)
            expect_counts(page, 150)
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)
        expect(page.locator("#status-banner[data-problem=redis]")).to_have_count(0, timeout=BACK)
        expect_counts(page, 150)
        shown = page.evaluate("window.countsShown")
        assert set(shown) <= {"150", "(150)"}, f"never another number, nor 0: {sorted(set(shown))}"
