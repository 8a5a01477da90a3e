"""The feed draws only the top of its rows (static/js/views/feed-window.js): every
frame's paint grew with the rows in the list, so a page holding 500 kept the
main thread busy for each notification (docs/capacity.md).

What must hold all the same: the rows drawn are always the top of the list in
its order; a reader who scrolls, or presses j past the last drawn row, gets the
next ones; one coming at the top lets none of the rows go while the reader is
further down, and back at the top the window shrinks again; a row the user is on is
never let go, and one that moves past the drawn rows with the focus in it is
drawn where it goes, with the focus kept.
"""
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import accessibility_violations, sign_in
from tests.integration.e2e.inbox import (
    FEED_PAGE,
    FEED_SLACK,
    current_id,
    expect_held,
    has_class,
    row,
    rows,
    scroll_to_draw,
)

WAIT = 10_000

# The drawn rows' ids, and the ids of the rows the tab has in the list's order (the
# collection is newest first; each of these tests' notifications is its own row).
DRAWN = "() => Array.from(document.querySelectorAll('#feed li.notification')).map(li => li.dataset.id)"
HELD = "() => herald.notifications.map(m => m.id)"


def signed_in_with(live_server, redis, page, count):
    """ann, subscribed to ops, with ``count`` notifications published before she signs
    in; their ids, newest first."""
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["ops"], limit=10)
    bus = Bus(redis)
    sent = [bus.publish("ops.tick", f"tick {i}") for i in range(count)]
    sign_in(page, live_server, "ann", "ann-password")
    return bus, sent[::-1]


def test_only_the_top_is_drawn_and_scrolling_draws_the_rest_in_order(live_server, redis, page):
    bus, sent = signed_in_with(live_server, redis, page, 120)
    expect_held(page, 100, WAIT)  # one page
    expect(rows(page)).to_have_count(FEED_PAGE, timeout=WAIT)
    assert page.evaluate(DRAWN) == sent[:FEED_PAGE]
    older = page.locator("#load-more")  # after the last row held: hidden until it is drawn
    expect(older).to_be_hidden()

    # Live ones at the top: still the top of the list, newest first; past the window and its
    # slack, the oldest drawn are let go together.
    live = [bus.publish("ops.tick", f"live {i}") for i in range(FEED_SLACK + 1)][::-1]
    expect(row(page, live[0])).to_be_visible(timeout=WAIT)
    expect(rows(page)).to_have_count(FEED_PAGE)
    assert page.evaluate(DRAWN) == (live + sent)[:FEED_PAGE]

    held = len(live) + 100
    expect_held(page, held, WAIT)
    scroll_to_draw(page, held, WAIT)
    assert page.evaluate(DRAWN) == page.evaluate(HELD) == (live + sent)[:held]
    expect(older).to_be_visible()
    assert accessibility_violations(page) == []


def test_j_past_the_last_drawn_row_draws_the_next_and_moves_there(live_server, redis, page):
    _bus, sent = signed_in_with(live_server, redis, page, 80)
    expect(rows(page)).to_have_count(FEED_PAGE, timeout=WAIT)
    page.keyboard.press("j")  # into the list: the top row
    expect(row(page, sent[0]).locator("button.open")).to_be_focused()
    for _ in range(FEED_PAGE):
        page.keyboard.press("j")
    expect(row(page, sent[FEED_PAGE]).locator("button.open")).to_be_focused(timeout=WAIT)
    assert current_id(page) == sent[FEED_PAGE]
    expect(rows(page)).to_have_count(80)
    expect(row(page, sent[FEED_PAGE])).to_be_in_viewport()
    # Shift+A selects every row the tab holds, drawn or not.
    page.keyboard.press("Shift+A")
    expect(page.locator(".bulk-count")).to_contain_text("80 selected", timeout=WAIT)


def test_back_at_the_top_the_window_shrinks_when_the_next_one_comes(live_server, redis, page):
    bus, sent = signed_in_with(live_server, redis, page, 100)
    expect(rows(page)).to_have_count(FEED_PAGE, timeout=WAIT)
    scroll_to_draw(page, 100, WAIT)
    expect(rows(page)).to_have_count(100)
    # Further down, one coming at the top lets none of the rows below go.
    page.wait_for_function("() => herald.views.feed.nearTop === false", timeout=WAIT)
    deep = bus.publish("ops.tick", "while reading further down")
    expect(row(page, deep)).to_be_attached(timeout=WAIT)
    expect(rows(page)).to_have_count(101)
    expect(row(page, sent[-1])).to_be_in_viewport()
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_function("() => herald.views.feed.nearTop === true", timeout=WAIT)
    fresh = bus.publish("ops.tick", "fresh")
    expect(row(page, fresh)).to_be_visible(timeout=WAIT)
    expect(rows(page)).to_have_count(FEED_PAGE, timeout=WAIT)
    assert page.evaluate(DRAWN) == ([fresh, deep] + sent)[:FEED_PAGE]


def test_a_row_moving_past_the_drawn_ones_with_the_focus_in_it_is_drawn_where_it_goes(
        live_server, redis, page):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["ops"], limit=10)
    bus = Bus(redis)
    critical = bus.publish("ops.db", "Database down", severity="critical")  # the oldest: pinned on top
    sent = [bus.publish("ops.tick", f"tick {i}") for i in range(80)][::-1]
    sign_in(page, live_server, "ann", "ann-password")
    pinned = row(page, critical)
    expect(pinned).to_have_class(has_class("pinned"), timeout=WAIT)
    expect(rows(page).first).to_have_attribute("data-id", critical)
    expect(rows(page)).to_have_count(FEED_PAGE)
    page.keyboard.press("j")
    expect(pinned.locator("button.open")).to_be_focused()
    page.keyboard.press("u")  # read: no longer pinned, so last, past the drawn rows
    moved = row(page, critical)
    expect(moved).not_to_have_class(has_class("pinned"), timeout=WAIT)
    expect(rows(page).last).to_have_attribute("data-id", critical)
    expect(moved.locator("button.open")).to_be_focused()
    assert page.evaluate(DRAWN) == sent + [critical]
