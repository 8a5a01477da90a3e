"""The dashboard under a flood of notifications (a replay after a reconnect
brings hundreds at once): each one costs the page a bounded amount of work,
not work that grows with everything the feed holds, and the feed stays right
while its oldest are let go.

The work is counted, not timed (timings belong in bench/browser_burst.py):
how many items are drawn and how many ids compared while 650 notifications
arrive. Drawing the whole list again, or sorting it, for each one multiplies
both by the feed's length; a page that does so falls seconds behind a steady
100 a second and holds its main thread long after a web process restarts.
"""
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import sign_in
from tests.integration.e2e.inbox import FEED_PAGE, FEED_SLACK, scroll_to_draw

COUNT = 650        # past the 550 the feed holds before it lets the oldest 50 go
REPEAT_EVERY = 10  # every tenth has the same topic and title: one collapsed group

COUNTERS = """() => {
  window.work = {drawn: 0, compared: 0};
  var feed = herald.views.feed, draw = feed.draw, compare = herald.compareIds;
  feed.draw = function () { window.work.drawn++; return draw.apply(this, arguments); };
  herald.compareIds = function () { window.work.compared++; return compare.apply(this, arguments); };
}"""

# The feed as drawn and as held: item ids, each item's count, the groups the
# collection's models make (same topic and title), and the number held.
FEED = """() => {
  var items = Array.from(document.querySelectorAll('#feed li.notification'));
  var groups = {};
  herald.notifications.each(function (m) {
    var key = m.get('topic') + '\\n' + m.get('title');
    groups[key] = (groups[key] || 0) + 1;
  });
  return {
    ids: items.map(function (li) { return li.getAttribute('data-id'); }),
    counts: items.map(function (li) {
      var count = li.querySelector('.count');
      return count ? Number(count.querySelector('[aria-hidden]').textContent.replace('×', '')) : 1;
    }),
    groups: Object.keys(groups).length,
    repeats: groups['ops.repeat\\nSame again'] || 0,
    held: herald.notifications.length
  };
}"""


def id_key(entry_id):
    ms, seq = entry_id.split("-")
    return int(ms), int(seq)


def test_a_flood_costs_bounded_work_per_notification_and_the_feed_stays_right(
        live_server, redis, page):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["ops"], limit=10)
    sign_in(page, live_server, "ann", "ann-password")
    page.evaluate(COUNTERS)
    bus = Bus(redis)
    sent = [bus.publish("ops.repeat", "Same again") if i % REPEAT_EVERY == 0 else
            bus.publish("ops.tick", f"tick {i}") for i in range(COUNT)]
    newest = page.locator(f'#feed li.notification[data-id="{sent[-1]}"]')
    expect(newest).to_be_visible(timeout=30_000)
    page.wait_for_function("(n) => herald.notifications.length <= n", arg=550)

    work = page.evaluate("window.work")
    # Only the top of the list is drawn (feed-window.js); scrolled to its end, all of it.
    assert page.evaluate(FEED)["ids"] == sorted(page.evaluate(FEED)["ids"], key=id_key, reverse=True)
    assert FEED_PAGE <= len(page.evaluate(FEED)["ids"]) <= FEED_PAGE + FEED_SLACK
    scroll_to_draw(page, page.evaluate(FEED)["groups"], 30_000)
    feed = page.evaluate(FEED)
    # Right: newest first, one item per group, each group's count what is held,
    # the newest 500-550 held and nothing older than what was let go.
    assert feed["ids"] == sorted(feed["ids"], key=id_key, reverse=True)
    assert feed["ids"][0] == sent[-1]
    assert len(feed["ids"]) == feed["groups"]
    assert 500 <= feed["held"] <= 550
    held_repeats = sum(1 for i in range(COUNT - feed["held"], COUNT) if i % REPEAT_EVERY == 0)
    assert feed["repeats"] == held_repeats
    assert feed["counts"][feed["ids"].index(sent[-REPEAT_EVERY])] == held_repeats
    assert sent[COUNT - feed["held"] - 1] not in feed["ids"]

    # Bounded: one draw per arrival, plus one per notification let go (its
    # group's count shrinks), never the whole list again; ids compared a few
    # dozen times per notification (bisection), not once per item held.
    let_go = COUNT - feed["held"]
    assert work["drawn"] <= COUNT + let_go, work
    assert work["compared"] <= 20 * COUNT, work
