"""The inbox's layout (issue 38, points 4, 7, 9 and the small ones), in Chromium and
measured with getBoundingClientRect: the list keeps its room beside the detail,
the first row starts high, rows scan easily, the phone's header never hides the
current page, and the labels say what they do, in English and German."""
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import DESKTOP, PHONE, accessibility_violations, sign_in

WAIT = 5_000
LONG = "[B] Item {}: a reasonably long notification title that needs room"
SHOTS = Path("/tmp/shots/polish")  # looked at by eye; not compared


@pytest.fixture
def board(live_server, redis):
    """An admin with a grouped critical (×8), a failed and a succeeded run, and
    notifications of every severity: what the issue's screenshots showed."""
    accounts.create_user(redis, "root", "root-password", admin=True)
    subscriptions.add(redis, "root", ["ops", "spark", "crm"], limit=10)
    bus = Bus(redis)
    for i in range(8):
        bus.publish("ops.db", "Database primary unreachable", severity="critical", body=f"attempt {i}")
    severities = ["info", "warning", "error", "success"]
    sent = [bus.publish(f"crm.lead.b{i % 4}", LONG.format(i), severity=severities[i % 4]) for i in range(16)]
    bus.publish("spark.job.started", "nightly started", correlation_id="run-bad")
    bus.publish("spark.job.progress", "nightly 40%", correlation_id="run-bad", data={"percent": 40})
    bus.publish("spark.job.failed", "nightly failed", severity="error", correlation_id="run-bad",
                body="division by zero")
    bus.publish("spark.job.started", "hourly started", correlation_id="run-ok")
    bus.publish("spark.job.succeeded", "hourly succeeded", severity="success", correlation_id="run-ok",
                data={"percent": 100})
    return sent


def herald_compact(page, ago):
    """herald.compactWords for a time ``ago`` milliseconds back, in the page's language."""
    return page.evaluate("ago => herald.compactWords(Date.now() - ago)", ago)


def open_board(contexts, server, viewport, lang="en", scheme="light"):
    context = contexts(viewport=viewport, color_scheme=scheme)
    context.add_cookies([{"name": "herald_lang", "value": lang, "url": server.url}])
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in(page, server, "root", "root-password")
    expect(page.locator("#feed li.notification").first).to_be_visible(timeout=WAIT)
    return page


def box(page, selector):
    return page.evaluate("s => { const r = document.querySelector(s)?.getBoundingClientRect();"
                         " return r ? {x: r.x, y: r.y, width: r.width, height: r.height, right: r.right,"
                         " bottom: r.bottom} : null; }", selector)


def test_the_detail_leaves_the_list_its_room(live_server, board, contexts):
    """Before: the detail squeezed the list to ~420 px, titles to "[B] Item 1…", the
    pinned row lost its title under "×8" and "Pinned", the aside kept ~320 px."""
    page = open_board(contexts, live_server, DESKTOP)
    page.locator(f'#feed li[data-id="{board[-1]}"] button.open').click()
    expect(page.locator("#detail h2")).to_have_text(LONG.format(15))
    feed = box(page, ".feed-card")
    assert feed["width"] >= 560, f"the list is {feed['width']} px wide beside the detail"
    detail, aside = box(page, "#detail"), box(page, "#columns > aside")
    beside = aside and aside["width"] > 0 and aside["y"] < detail["bottom"] and aside["x"] > feed["x"]
    assert not beside, f"the aside stays beside the list and the detail: {aside}"
    # Every title has the room it needs, or at least 300 px of it: chips give way first.
    cramped = page.evaluate("""() => [...document.querySelectorAll('#feed li.notification .title')]
      .filter(t => t.scrollWidth > t.clientWidth && t.clientWidth < 300)
      .map(t => t.textContent + ': ' + t.clientWidth)""")
    assert cramped == []
    pinned = page.locator("#feed li.notification.pinned")
    expect(pinned).to_have_count(1)
    count, pin = box(page, "#feed li.pinned .count"), box(page, "#feed li.pinned .pin")
    overlap = (count["x"] < pin["right"] and pin["x"] < count["right"]
               and count["y"] < pin["bottom"] and pin["y"] < count["bottom"])
    assert not overlap, f"×8 {count} overlaps Pinned {pin}"
    title = page.evaluate("document.querySelector('#feed li.pinned .title').clientWidth")
    assert title >= 200, f"the pinned title has {title} px"


def test_the_first_row_starts_high_and_no_placeholder_is_cut(live_server, board, contexts):
    """Before: filters open and the Publish form beside the list put the first row at
    y≈257; "words in the title or tex" was cut."""
    for lang in ("en", "de"):
        page = open_board(contexts, live_server, DESKTOP, lang)
        first = box(page, "#feed li.notification")
        assert first["y"] < 180, f"{lang}: the first row starts at y={first['y']}"
        expect(page.locator("#filters-box")).not_to_have_attribute("open", "")
        expect(page.locator("#publish form")).to_be_hidden()  # folded under Subscriptions
        page.click("#filters-box summary")
        page.click("#publish summary")
        cut = page.evaluate("""() => {
          const ctx = document.createElement('canvas').getContext('2d');
          return [...document.querySelectorAll('input[placeholder]')].filter(i => i.offsetParent).map(i => {
            const s = getComputedStyle(i);
            ctx.font = s.font;
            const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
            return [i.placeholder, Math.ceil(ctx.measureText(i.placeholder).width), Math.floor(room)];
          }).filter(([, need, room]) => need > room);
        }""")
        assert cut == [], f"{lang}: placeholders cut (text, px needed, px there): {cut}"
        past = page.evaluate("""() => {
          const edge = document.getElementById('filters').getBoundingClientRect().right;
          return [...document.querySelectorAll('#filters button, #filters input, #filters select')]
            .filter(e => e.getBoundingClientRect().right > edge + 0.5).map(e => e.textContent || e.name);
        }""")
        assert past == [], f"{lang}: past the filters' edge: {past}"  # "Zurücksetzen" was
        # A filter in use is said on the closed box's summary.
        page.select_option("#filters select[name=severity]", "error")
        page.click("#filters-box summary")
        expect(page.locator("#filters-box summary")).to_contain_text("error" if lang == "en" else "Fehler")


def test_rows_scan_time_column_one_severity_and_coloured_runs(live_server, board, contexts):
    """Before: the time sat in the meta line, severity was said by icon, word and colour
    plus a "failed" pill, and a failed run's bar stayed blue."""
    page = open_board(contexts, live_server, DESKTOP)
    times = page.evaluate("""() => [...document.querySelectorAll('#feed li.notification time')].map(t => {
      const r = t.getBoundingClientRect();
      return {right: Math.round(r.right), nums: getComputedStyle(t).fontVariantNumeric};
    })""")
    assert len({t["right"] for t in times}) == 1, f"the times are not one right-aligned column: {times}"
    assert all("tabular-nums" in t["nums"] for t in times)
    words = page.evaluate("""() => [...document.querySelectorAll('#feed li.notification .severity')]
      .filter(s => s.getBoundingClientRect().width > 2).map(s => s.textContent)""")
    assert words == [], f"severity said in words too: {words}"
    assert page.locator("#feed li.severity-error .sr-only", has_text="error").count() >= 1  # said to readers
    failed = page.locator("#feed li.notification", has_text="nightly failed")
    pill = failed.locator(".run-state").evaluate("e => e.getBoundingClientRect().width")
    assert pill <= 2, f"a 'failed' pill beside the error's ✖ ({pill} px)"
    colours = page.evaluate("""() => {
      const probe = document.createElement('span');
      document.body.appendChild(probe);
      const colour = v => { probe.style.color = v; return getComputedStyle(probe).color; };
      const bar = t => getComputedStyle([...document.querySelectorAll('#feed li.notification')]
        .find(li => li.textContent.includes(t)).querySelector('progress')).accentColor;
      const found = {failed: bar('nightly failed'), error: colour('var(--error)')};
      probe.remove();
      return found;
    }""")
    assert colours["failed"] == colours["error"], colours
    page.click("#tab-activity")
    done = page.locator("#feed li.notification", has_text="hourly succeeded")
    expect(done).to_be_visible()
    green = page.evaluate("""() => {
      const probe = document.createElement('span');
      document.body.appendChild(probe);
      probe.style.color = 'var(--success)';
      const want = getComputedStyle(probe).color;
      probe.remove();
      const li = [...document.querySelectorAll('#feed li.notification')]
        .find(l => l.textContent.includes('hourly'));
      return [getComputedStyle(li.querySelector('progress')).accentColor, want];
    }""")
    assert green[0] == green[1], green
    assert accessibility_violations(page) == []


PAGES = [("/", "Feed", "Mitteilungen"), ("/preferences", "Preferences", "Einstellungen"),
         ("/jobs", "Jobs", "Jobs"), ("/digests", "Digests", "Zusammenfassungen"),
         ("/webhooks", "Webhooks", "Webhooks"), ("/ops", "Operations", "Betrieb")]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_on_a_phone_the_header_shows_the_current_page_in_two_lines(live_server, board, contexts, lang):
    """Before: the nav scrolled sideways with no cue and hid the current page (/ops at
    x=495 of 390); "Zusammenfassungen" was cut; the tabs wrapped ("Für / Sie")."""
    page = open_board(contexts, live_server, PHONE, lang)
    for path, english, german in PAGES:
        page.goto(live_server.url + path)
        page.wait_for_selector("#connection[data-state=connected]")
        name = english if lang == "en" else german
        shown = page.evaluate("""name => [...document.querySelectorAll('.topbar *')].filter(e =>
            e.children.length === 0 && e.textContent.trim() === name && e.getClientRects().length)
          .map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; })""",
                              name)
        assert shown, f"{lang} {path}: {name} is not shown in the header"
        left, right, top, bottom = shown[0]
        assert left >= 0 and right <= PHONE["width"] and top >= 0, f"{lang} {path}: {name} at {shown[0]}"
        header = box(page, ".topbar")
        assert header["height"] <= 90, f"{lang} {path}: the header is {header['height']} px tall"
        cut = page.evaluate("""w => [...document.querySelectorAll(
            '.topbar a, .topbar button, .topbar summary, .tab')]
          .filter(e => e.getClientRects().length).filter(e => { const r = e.getBoundingClientRect();
            return e.scrollWidth > e.clientWidth + 1 || r.right > w + 0.5 || r.left < -0.5; })
          .map(e => e.textContent.trim())""", PHONE["width"])
        assert cut == [], f"{lang} {path}: cut {cut}"
    # The menu opens by keyboard and takes one to another page.
    page.locator(".nav-menu summary").focus()
    page.keyboard.press("Enter")
    other = "Preferences" if lang == "en" else "Einstellungen"
    page.locator(".nav a", has_text=other).click()
    expect(page.locator(".nav-menu summary")).to_contain_text(other)
    page.goto(live_server.url + "/")
    expect(page.locator("#feed li.notification").first).to_be_visible(timeout=WAIT)
    wrapped = page.evaluate("""() => [...document.querySelectorAll('.tab')].filter(t => {
      const range = document.createRange(); range.selectNodeContents(t.firstChild);
      return range.getClientRects().length > 1; }).map(t => t.textContent)""")
    assert wrapped == [], f"{lang}: tabs wrap mid-label: {wrapped}"
    assert accessibility_violations(page) == []


def test_the_density_button_says_what_it_switches_to(live_server, board, contexts):
    """Before: it said "Comfortable" whichever density was on."""
    page = open_board(contexts, live_server, DESKTOP)
    density = page.locator("#feed-bar .density")
    expect(density).to_have_text("Comfortable")
    density.click()
    expect(page.locator("body")).to_have_class("dashboard density-comfortable")
    expect(density).to_have_text("Compact")
    density.click()
    expect(density).to_have_text("Comfortable")
    german = open_board(contexts, live_server, DESKTOP, "de")
    expect(german.locator("#feed-bar .density")).to_have_text("Ausführlich")
    expect(german.locator("#filters button.clear")).to_have_text("Zurücksetzen")
    expect(german.locator(".nav a[aria-current=page]")).to_have_text("Mitteilungen")


def test_the_empty_inbox_after_subscribing_says_what_comes(live_server, redis, page):
    """Before: it still said "Subscribe to a topic prefix…" with a subscription in place."""
    accounts.create_user(redis, "bea", "bea-password")
    sign_in(page, live_server, "bea", "bea-password")
    expect(page.locator("#feed-empty")).to_contain_text("Subscribe to a topic prefix")
    page.fill("#subscriptions input[name=topic]", "quiet")
    page.click("#subscriptions button[type=submit]")
    expect(page.locator('#subscriptions li[data-topic="quiet"]')).to_be_visible()
    expect(page.locator("#feed-empty")).not_to_contain_text("Subscribe to a topic prefix", timeout=WAIT)
    expect(page.locator("#feed-empty")).to_contain_text("quiet")


@pytest.mark.parametrize(("path", "lang", "scheme"), [("/", "en", "light"), ("/preferences", "de", "dark")])
def test_the_phone_menu_closes_on_escape_and_on_a_click_outside(live_server, board, contexts, path, lang,
                                                                scheme):
    """Before: at 390 px the open page menu stayed open on Escape and on a click elsewhere,
    covering the page, and the keyboard user had to find its summary again."""
    page = open_board(contexts, live_server, PHONE, lang, scheme)
    page.goto(live_server.url + path)
    page.wait_for_selector("#connection[data-state=connected]")
    menu, summary = page.locator(".nav-menu"), page.locator(".nav-menu summary")
    summary.focus()
    page.keyboard.press("Enter")
    expect(menu).to_have_attribute("open", "")
    page.keyboard.press("Tab")  # into the menu's first link
    expect(page.locator(".nav a").first).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).not_to_have_attribute("open", "")
    expect(summary).to_be_focused()
    expect(page.locator(".nav a").first).to_be_hidden()
    summary.click()
    expect(menu).to_have_attribute("open", "")
    page.locator(".nav").click(position={"x": 5, "y": 2})  # inside the menu, between links: it stays
    expect(menu).to_have_attribute("open", "")
    page.mouse.click(PHONE["width"] / 2, PHONE["height"] - 40)  # below the menu, on the page
    expect(menu).not_to_have_attribute("open", "")
    summary.click()
    expect(menu).to_have_attribute("open", "")
    assert accessibility_violations(page) == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"menu-390-{lang}-{scheme}.png")
    page.keyboard.press("Escape")  # the focus is on the summary after its click
    expect(menu).not_to_have_attribute("open", "")


def test_german_calls_the_feed_mitteilungen_on_every_page(live_server, board, contexts):
    """Before: the nav said "Mitteilungen" for "Feed" while the preferences page said
    "Ihrem Feed" and the 404 page "Zurück zu Ihrem Feed"."""
    page = open_board(contexts, live_server, DESKTOP, "de")
    for path, _english, _german in PAGES:
        page.goto(live_server.url + path)
        page.wait_for_selector("#connection[data-state=connected]")
        assert "Feed" not in page.locator("body").inner_text(), f"{path} says Feed"
    expect(page.locator(".nav a").first).to_have_text("Mitteilungen")
    page.goto(live_server.url + "/preferences")
    expect(page.locator("main")).to_contain_text("erscheint in Ihren Mitteilungen")
    page.goto(live_server.url + "/no-such-page")
    expect(page.locator("main a")).to_have_text("Zurück zu Ihren Mitteilungen")


@pytest.mark.parametrize(("lang", "scheme"), [("en", "light"), ("de", "dark")])
def test_on_a_phone_the_time_is_compact_and_titles_keep_their_room(live_server, board, contexts, lang,
                                                                   scheme):
    """Before: at 390 px the time column ("29 sec. ago", "vor 29 Sek.") took ~70 px and the
    row titles kept ~206. Now the time is short ("29s") and its full forms stay in the
    <time>'s datetime and title (hover) and in words for screen readers."""
    page = open_board(contexts, live_server, PHONE, lang, scheme)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"inbox-390-{lang}-{scheme}.png")
    rows = page.evaluate("""() => [...document.querySelectorAll('#feed li.notification')].map(li => {
      const t = li.querySelector('.title'), time = li.querySelector('time.when');
      const short = time.querySelector('.when-short');
      // A grouped row's "×8" shares the title's line: the two together then.
      const chip = li.querySelector('.open .count');
      const width = t.clientWidth + (chip ? chip.getBoundingClientRect().width : 0);
      return {title: t.textContent, width: width, cut: t.scrollWidth > t.clientWidth,
              shown: short ? short.innerText : time.innerText, timeWidth: time.getBoundingClientRect().width,
              datetime: time.getAttribute('datetime'), hover: time.title, said: time.textContent};
    })""")
    cramped = [(r["title"], r["width"]) for r in rows if r["cut"] and r["width"] < 220]
    assert cramped == [], f"{lang}: titles under 220 px at 390: {cramped}"
    wide = [(r["shown"], r["timeWidth"]) for r in rows if r["timeWidth"] > 40]
    assert wide == [], f"{lang}: the time takes room: {wide}"
    words = re.compile(r"just now|ago" if lang == "en" else r"gerade eben|vor ")
    for r in rows:
        assert r["datetime"] and r["hover"], r
        assert words.search(r["said"]), f"no words for screen readers: {r}"
    assert {r["shown"] for r in rows} <= {"now", "jetzt"} | {f"{n}s" for n in range(5, 60)} | {
        f"{n} s" for n in range(5, 60)}, rows
    compact = page.evaluate("""() => { const now = new Date(2026, 10, 29, 12).getTime();
      return [29e3, 5 * 60e3, 3 * 3600e3, 2 * 86400e3, 27 * 86400e3, 400 * 86400e3]
        .map(ago => herald.compactWords(now - ago, now)); }""")
    assert compact == (["29s", "5m", "3h", "2d", "Nov 2", "Oct 2025"] if lang == "en" else
                       ["29 s", "5 min", "3 h", "2 T", "2. Nov.", "Okt. 2025"]), compact
    # The widest compact forms ("59 min", "30. Sept.") still leave the titles their room
    # (a date older than a week a few px less: ~218 in German).
    date = "30. Sept." if lang == "de" else "Sep 30"
    for widest, room in ((herald_compact(page, 59 * 60e3), 220), (date, 215)):
        least = page.evaluate("""w => { document.querySelectorAll('#feed .when-short').forEach(s => {
            s.textContent = w; });
          return Math.min(...[...document.querySelectorAll('#feed li.notification:not(.pinned) .title')]
            .filter(t => t.scrollWidth > t.clientWidth).map(t => t.clientWidth)); }""", widest)
        assert least >= room, f"{lang}: with the time at {widest!r} a title has {least} px"
        page.screenshot(path=SHOTS / f"inbox-390-{lang}-{scheme}-{room}.png")
    assert accessibility_violations(page) == []
    page.set_viewport_size(DESKTOP)  # a wide screen shows the words again
    first = page.locator("#feed li.notification time.when").first
    expect(first.locator(".when-short")).to_be_hidden()
    expect(first.locator(".when-words")).to_have_text(words)
    assert first.locator(".when-words").evaluate("e => e.getBoundingClientRect().width") > 20
    page.screenshot(path=SHOTS / f"inbox-1280-{lang}-{scheme}.png")
