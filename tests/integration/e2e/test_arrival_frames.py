"""What a stream of arrivals does to the dashboard, in real Chromium: the header's
badge is drawn in the frame that draws the new row (not in a frame of its own a
moment later); the page's title and a screen reader are told at most once a second,
and end up told of every arrival."""
import itertools
import re

import pytest
from playwright.sync_api import expect

from tests.integration.e2e.conftest import dashboard_of_ann

WAIT = 5_000  # ms

# Records, for each row the feed inserts, the badge's text at the next animation frame:
# a callback asked for when the row is seen runs after those the page asked for while
# inserting it, and before that frame is painted. And every change of the page's title.
AT_THE_ROWS_FRAME = """() => {
  window.titles = [];
  new MutationObserver(function () {
    titles.push({text: document.title, at: performance.now()});
  }).observe(document.querySelector('title'), {childList: true, characterData: true, subtree: true});
  window.atRowFrame = [];
  var seen = {};
  new MutationObserver(function (mutations) {
    mutations.forEach(function (m) {
      m.addedNodes.forEach(function (node) {
        var id = node.getAttribute && node.getAttribute('data-id');
        if (!id || seen[id]) return;  // first drawn only (a redraw re-adds)
        seen[id] = true;
        requestAnimationFrame(function () {
          atRowFrame.push(document.querySelector('#badge .badge-count').textContent);
        });
      });
    });
  }).observe(document.getElementById('feed'), {childList: true});
}"""

# Records every announcement of the live region, with when it was made.
ANNOUNCEMENTS = """() => {
  window.announced = [];
  var region = document.getElementById('announcer');
  new MutationObserver(function () {
    announced.push({text: region.textContent.trim(), at: performance.now()});
  }).observe(region, {childList: true, characterData: true, subtree: true});
}"""


@pytest.fixture
def dashboard(live_server, redis, page):
    return dashboard_of_ann(page, live_server, redis, "ops")


def test_the_badge_is_drawn_in_the_frame_of_the_new_row_and_the_title_changes_once_a_second(
        dashboard, live_server, api_key):
    page = dashboard
    page.evaluate(AT_THE_ROWS_FRAME)
    for n in range(1, 5):
        sent = live_server.publish(api_key, topic="ops.disk", title=f"Disk {n}", severity="warning")
        expect(page.locator(f'#feed li[data-id="{sent}"]')).to_be_visible(timeout=WAIT)
        page.wait_for_function("n => window.atRowFrame.length >= n", arg=n)
    assert page.evaluate("window.atRowFrame") == ["1", "2", "3", "4"]
    expect(page).to_have_title(re.compile(r"^\(4\) "), timeout=WAIT)
    titles = page.evaluate("window.titles")
    assert titles[0]["text"].startswith("(1) "), titles
    gaps = [later["at"] - earlier["at"] for earlier, later in itertools.pairwise(titles)]
    assert all(gap >= 990 for gap in gaps), titles


def _count(text):
    """How many arrivals an announcement tells of."""
    many = re.match(r"(\d+) new notifications", text)
    return int(many.group(1)) if many else 1


def test_a_screen_reader_is_told_at_most_once_a_second_and_of_every_arrival(
        dashboard, live_server, api_key):
    page = dashboard
    page.evaluate(ANNOUNCEMENTS)
    for n in range(6):  # each shown before the next is published: a stream, not a burst
        sent = live_server.publish(api_key, topic="ops.disk", title=f"Disk {n}", severity="warning")
        expect(page.locator(f'#feed li[data-id="{sent}"]')).to_be_visible(timeout=WAIT)
    page.wait_for_function("""() => window.announced.reduce(function (sum, a) {
        var many = /^(\\d+) new notifications/.exec(a.text);
        return sum + (many ? Number(many[1]) : 1);
      }, 0) >= 6""", timeout=WAIT)
    announced = page.evaluate("window.announced")
    assert announced[0]["text"] == "New warning: Disk 0"
    assert sum(_count(a["text"]) for a in announced) == 6, announced
    gaps = [later["at"] - earlier["at"] for earlier, later in itertools.pairwise(announced)]
    assert all(gap >= 990 for gap in gaps), announced


# For ages across every unit and its edges: the words of a time stay the same from now
# until herald.relativeDue says, and (before it is a date) change then; "just now" and a
# time ahead of the clock are looked at each second.
RELATIVE_DUE = """() => {
  var now = new Date(2026, 10, 29, 12).getTime(), s = 1000, wrong = [];
  var ages = [-10 * s, -0.4 * s, 0, 0.3 * s, 4.4 * s, 4.6 * s, 5 * s, 29.5 * s, 59.4 * s, 59.6 * s,
              61 * s, 119.6 * s, 3599.4 * s, 3599.6 * s, 3661 * s, 86399.6 * s, 86401 * s,
              3 * 86400 * s + 7, 7 * 86400 * s - 600 * s, 7 * 86400 * s + s];
  ages.forEach(function (age) {
    var date = now - age, due = herald.relativeDue(date, now);
    var words = function (t) { return herald.relativeWords(date, t) + ' | ' + herald.compactWords(date, t); };
    if (!(due > now)) wrong.push({age: age, due: due - now, problem: 'not after now'});
    if (age < 4.5 * s) {  // "just now", or ahead of the clock: looked at each second, as ever
      if (due - now > s) wrong.push({age: age, due: due - now, problem: 'not each second'});
      return;
    }
    for (var k = 0; k <= 40; k++) {
      var t = now + Math.floor((due - 1 - now) * k / 40);
      if (words(t) === words(now)) continue;
      wrong.push({age: age, at: t - now, problem: 'changed before due'});
      break;
    }
    var stepped = age >= 5 * s && age < 7 * 86400 * s - 3600 * s;
    if (stepped && words(due + 1) === words(now)) wrong.push({age: age, problem: 'unchanged at due'});
  });
  return wrong;
}"""


def test_a_rows_time_is_redrawn_when_its_words_change_and_not_before(dashboard, live_server, api_key):
    page = dashboard
    assert page.evaluate(RELATIVE_DUE) == []
    sent = live_server.publish(api_key, topic="ops.disk", title="Disk", severity="warning")
    words = page.locator(f'#feed li[data-id="{sent}"] time.when .when-words')
    expect(words).to_have_text("just now", timeout=WAIT)
    expect(words).to_have_text(re.compile(r"^[5-9] sec"), timeout=10_000)  # redrawn each second while young
