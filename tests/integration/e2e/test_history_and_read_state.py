"""Opening the page shows recent history then goes live; read state is shared by all tabs."""
import pytest
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import sign_in
from tests.integration.e2e.inbox import has_class


@pytest.fixture
def ann(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["ops"], limit=10)
    return Bus(redis)


def ids_in_feed(page):
    return page.locator("#feed li.notification").evaluate_all(
        "items => items.map(i => i.getAttribute('data-id'))")


def badge(page):
    """How many rows of the inbox are unread ("" for none): its tab's count."""
    return page.locator("#tab-inbox .tab-count")


def test_page_opens_with_history_then_goes_live(live_server, ann, page):
    bus = ann
    before = [bus.publish("ops.a", f"before {i}") for i in range(3)]
    bus.publish("sports", "not subscribed")
    sign_in(page, live_server, "ann", "ann-password")
    expect(page.locator("#feed li.notification")).to_have_count(3)
    live = bus.publish("ops.b", "live")
    expect(page.locator(f'#feed li[data-id="{live}"]')).to_be_visible(timeout=2_000)
    assert ids_in_feed(page) == [live] + before[::-1]


def test_unread_badge_is_the_same_in_every_tab(live_server, ann, browser):
    bus = ann
    tabs = []
    for _ in range(2):  # two contexts: like two devices, nothing shared but the server
        context = browser.new_context()
        tabs.append((context, context.new_page()))
    try:
        first, second = tabs[0][1], tabs[1][1]
        for page in (first, second):
            sign_in(page, live_server, "ann", "ann-password")
        sent = [bus.publish("ops.x", f"n{i}") for i in range(3)]
        for page in (first, second):
            expect(badge(page)).to_have_text("3")

        first.click(f'#feed li[data-id="{sent[1]}"]')
        for page in (first, second):
            expect(badge(page)).to_have_text("2")
        expect(second.locator(f'#feed li[data-id="{sent[1]}"]')).not_to_have_class(has_class("unread"))

        first.click(".mark-all-read")
        for page in (first, second):
            expect(badge(page)).to_have_text("")

        bus.publish("ops.x", "after")
        for page in (first, second):
            expect(badge(page)).to_have_text("1")

        second.reload()  # read state is the server's: it survives a reload
        second.wait_for_selector("#connection[data-state=connected]")
        expect(second.locator("#feed li.notification")).to_have_count(4)
        expect(badge(second)).to_have_text("1")
    finally:
        for context, _ in tabs:
            context.close()
