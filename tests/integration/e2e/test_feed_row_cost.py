"""What one live notification costs the dashboard does not grow with the rows
the feed holds (issue 39: the page fell behind as its feed filled).

Counted and checked, not timed (timings belong in bench/browser_latency.py):
- no arrival looks a row up by querying the list (itemByKey keeps the rows it drew);
- each row is contained (CSS `contain: layout style`), so a row moved by the one
  inserted above it is moved whole, and a change inside a row stays in it;
- no `:has()` rule has a row for its subject: such a rule had every change
  inside any row (its time, each second) restyle that row;
- a row's actions are not drawn at all until shown (hover, focus): hidden ones
  with their snooze menu's closed <details> cost every style update a little
  per row. What the user sees is the same: shown on hover and on focus, and the
  row with an open snooze menu lifted over the rows below it;
- no row has a <details> until its snooze menu is used: each one made a shadow
  tree of its own as the row was drawn, half of what a live notification cost
  the page. Its Snooze button, by the mouse or by the keyboard, makes the menu
  and opens it on its first choice.
"""
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import DESKTOP, sign_in

COUNT = 40

# Counts selector queries anywhere in the page that look rows up by key or id.
COUNT_LOOKUPS = """() => {
  window.lookups = 0;
  [Element.prototype, Document.prototype, DocumentFragment.prototype].forEach(function (proto) {
    ['querySelector', 'querySelectorAll', 'matches', 'closest'].forEach(function (name) {
      var original = proto[name];
      if (!original) return;
      proto[name] = function (selector) {
        if (/data-(key|id)\\s*=/.test(String(selector))) window.lookups++;
        return original.apply(this, arguments);
      };
    });
  });
}"""

# Rules with :has() whose subject (the selector without its :has()) is a row.
HAS_RULES_ON_ROWS = """() => {
  var row = document.querySelector('#feed li.notification'), found = [];
  function walk(rules) {
    Array.from(rules).forEach(function (rule) {
      if (rule.cssRules) walk(rule.cssRules);
      if (!rule.selectorText || rule.selectorText.indexOf(':has(') < 0) return;
      rule.selectorText.split(',').forEach(function (selector) {
        var subject = selector.replace(/:has\\((?:[^()]|\\([^()]*\\))*\\)/g, '').trim();
        try {
          if (subject && row.matches(subject)) found.push(selector.trim());
        } catch (e) { /* a selector this browser does not know */ }
      });
    });
  }
  Array.from(document.styleSheets).forEach(function (sheet) { walk(sheet.cssRules); });
  return found;
}"""

ROWS = """() => Array.from(document.querySelectorAll('#feed li.notification')).map(function (row) {
  return {key: row.getAttribute('data-key'), contain: getComputedStyle(row).contain,
          actionsDrawn: row.querySelector('.actions').getClientRects().length > 0};
})"""


def test_a_live_notification_touches_only_its_own_row(live_server, redis, page):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["ops"], limit=10)
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, "ann", "ann-password")
    page.mouse.move(1, 1)  # over no row
    page.evaluate(COUNT_LOOKUPS)
    bus = Bus(redis)
    for i in range(COUNT):
        bus.publish("ops.rows", f"Row {i}")
    rows = page.locator("#feed li.notification")
    expect(rows).to_have_count(COUNT, timeout=10_000)
    assert page.evaluate("window.lookups") == 0

    drawn = page.evaluate(ROWS)
    assert all("layout" in row["contain"] and "style" in row["contain"] for row in drawn), drawn[:3]
    assert not any(row["actionsDrawn"] for row in drawn), [row["key"] for row in drawn if row["actionsDrawn"]]
    assert page.evaluate(HAS_RULES_ON_ROWS) == []
    expect(page.locator("#feed details")).to_have_count(0)

    # The same to the user: the actions show on hover and on focus.
    third = rows.nth(2)
    third.hover()
    expect(third.locator(".actions")).to_be_visible()
    expect(third.locator("button.archive")).to_be_visible()
    page.mouse.move(1, 1)
    expect(third.locator(".actions")).to_be_hidden()
    third.locator("button.open").focus()
    expect(third.locator(".actions")).to_be_visible()
    # Its open snooze menu is over the next rows (the row lifted), and no longer once closed.
    third.get_by_role("button", name="Snooze", exact=True).click()
    expect(third.locator("details.snooze .snooze-for").first).to_be_focused()
    expect(page.locator("#feed details")).to_have_count(1)  # made for this row only
    expect(page.locator("#detail")).to_be_hidden()  # the click opened the menu, not the row
    expect(third).to_have_css("z-index", "16")
    menu = third.locator("details.snooze .snooze-for").last.bounding_box()
    below = rows.nth(3).bounding_box()
    assert menu["y"] + menu["height"] > below["y"]  # it hangs over the row below
    expect(third.locator("details.snooze .snooze-for").last).to_be_visible()
    hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('.menu') !== null",
                        [menu["x"] + menu["width"] / 2, menu["y"] + menu["height"] / 2])
    assert hit, "the menu is under the rows below it"
    third.locator("details.snooze summary").click()
    expect(third).not_to_have_css("z-index", "16")


def ann_with_rows(live_server, redis, page, count):
    """ann signed in on a wide screen with ``count`` rows in her feed: its rows."""
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["ops"], limit=10)
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, "ann", "ann-password")
    bus = Bus(redis)
    for i in range(count):
        bus.publish("ops.rows", f"Row {i}")
    rows = page.locator("#feed li.notification")
    expect(rows).to_have_count(count, timeout=10_000)
    return rows


def test_a_rows_snooze_button_opens_its_menu_by_the_keyboard(live_server, redis, page):
    rows = ann_with_rows(live_server, redis, page, 3)
    first = rows.first
    first.locator("button.open").focus()
    snooze = first.get_by_role("button", name="Snooze", exact=True)
    snooze.focus()
    page.keyboard.press("Enter")
    menu = first.locator("details.snooze")
    expect(menu).to_have_attribute("open", "")
    expect(menu.locator(".snooze-for").first).to_be_focused()
    page.keyboard.press("2")  # its second choice: 4 hours
    expect(rows).to_have_count(2, timeout=10_000)
    assert len(page.evaluate("Object.keys(herald.notifications.snoozed)")) == 1


def test_the_last_rows_snooze_menu_is_not_cut_off_by_the_card(live_server, redis, page):
    """The feed's card clipped what overflowed it: the menu of one of the last rows
    showed two of its choices, and neither its time field nor "Snooze until then"."""
    last = ann_with_rows(live_server, redis, page, 2).last
    last.hover()
    last.get_by_role("button", name="Snooze", exact=True).click()
    until = last.locator(".snooze-custom")
    expect(until).to_be_visible()
    box = until.bounding_box()
    hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('.snooze-custom') !== null",
                        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
    assert hit, "the menu's last control is hidden"
