""""Select all N matching this view" (issue 38, point 11), in Chromium, as GitHub
does it: "Select all" selects at once the rows loaded in the tab (one page of
100 here, no older page loaded), and the bar offers right away every
notification matching the view, counted by the server (150). Chosen, Archive
and Snooze run on the server by filter, in one request, with an Undo that puts
back exactly what they changed. The large count (2,500) is the API tests'."""
import re

import pytest
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts, archive_and_snooze, subscriptions
from tests.integration.e2e.conftest import DESKTOP, accessibility_violations, sign_in
from tests.integration.e2e.inbox import FEED_PAGE, expect_held, rows
from tests.support import wait_for

WAIT = 15_000
PAGE = 100  # rows the feed loads per page (static/js/collections/notifications.js)
MANY = 150  # just over one page: more match than "Select all" selects


@pytest.fixture
def ann(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["bulk", "spark"], limit=10)
    return Bus(redis)


def by_filter(page):
    """The POSTs to /api/notification-state(/matching…) the page sends, as (url, body)."""
    sent = []
    page.on("request", lambda r: sent.append((r.url, r.post_data_json))
            if "/api/notification-state" in r.url and r.method == "POST" else None)
    return sent


ENGLISH = {"selected": f"{PAGE} selected", "offer": f"Select all {MANY} matching this view",
           "chosen": f"All {MANY} matching this view are selected."}
GERMAN = {"selected": f"{PAGE} ausgewählt", "offer": f"Alle {MANY} Treffer dieser Ansicht auswählen",
          "chosen": f"Alle {MANY} Treffer dieser Ansicht sind ausgewählt."}


def expect_one_page(page):
    """One page held, of which the top is drawn (static/js/views/feed-window.js)."""
    expect_held(page, PAGE, WAIT)
    expect(rows(page)).to_have_count(FEED_PAGE, timeout=WAIT)


def select_everything_matching(page, says=ENGLISH):
    """Select all (the tab's rows held, drawn or not, at once, no page loaded), then all
    matching."""
    loads = []
    page.on("request", lambda r: loads.append(r.url) if "/api/notifications?" in r.url else None)
    page.click(".select-all")
    expect(page.locator(".bulk-count")).to_contain_text(says["selected"], timeout=WAIT)
    offer = page.locator(".select-matching")
    expect(offer).to_have_text(says["offer"], timeout=WAIT)
    assert loads == [], "Select all loads no older page"
    expect_one_page(page)
    assert accessibility_violations(page) == []
    offer.click()
    expect(page.locator(".bulk-count")).to_have_text(says["chosen"])
    expect(page.locator(".bulk-unread")).to_be_hidden()  # by filter: read, archive, snooze


def test_archive_everything_matching_the_view_then_undo(live_server, redis, ann, page):
    # Machine steps: the Activity tab's, not the inbox's; the inbox's action leaves them.
    steps = [ann.publish("spark.job.started", f"run {i}", correlation_id=f"run-{i}") for i in range(3)]
    sent = [ann.publish("bulk.item", f"item {i}") for i in range(MANY)]
    sign_in(page, live_server, "ann", "ann-password")
    expect_one_page(page)
    select_everything_matching(page)
    requests = by_filter(page)
    page.click(".bulk-archive")
    expect(page.locator("#undo")).to_contain_text(f"Archived: {MANY} notifications", timeout=WAIT)
    # Said once the server answered: all of them archived by then, by filter, in one request.
    archived = archive_and_snooze.get(redis, "ann")["archived"]
    assert len(archived) == MANY and set(archived) == set(sent) and not set(steps) & set(archived)
    assert len(requests) == 1 and re.search(r"/matching\?.*tab=inbox", requests[0][0]), requests
    assert requests[0][1] == {"action": "archive"}, "by filter, not by id"
    page.click("#undo .undo")  # within the bar's 8 s
    expect(page.locator("#undo")).to_contain_text("Undone.", timeout=WAIT)
    expect_one_page(page)
    wait_for(lambda: archive_and_snooze.get(redis, "ann")["archived"], lambda a: a == [],
             message="every one brought back")


@pytest.mark.parametrize("scheme, locale", [("light", "en-US"), ("dark", "de-DE")])
def test_snooze_everything_matching_the_view_then_undo(live_server, redis, ann, contexts,
                                                       scheme, locale):
    steps = [ann.publish("spark.job.started", f"run {i}", correlation_id=f"run-{i}") for i in range(2)]
    sent = [ann.publish("bulk.item", f"item {i}") for i in range(MANY)]
    page = contexts(viewport=DESKTOP, color_scheme=scheme, locale=locale).new_page()
    sign_in(page, live_server, "ann", "ann-password")
    expect_one_page(page)
    select_everything_matching(page, GERMAN if locale == "de-DE" else ENGLISH)
    snooze = page.locator(".bulk-snooze")
    expect(snooze).to_be_visible()
    requests = by_filter(page)
    snooze.locator("summary").click()
    choice = snooze.locator(".snooze-for").first
    until = int(choice.get_attribute("data-until"))
    # The menu opens inside the list's card (which clips what sticks out), at 1280 px too.
    menu, card = snooze.locator(".menu").bounding_box(), page.locator(".feed-card").bounding_box()
    assert menu["x"] >= card["x"] and menu["x"] + menu["width"] <= card["x"] + card["width"], (menu, card)
    choice.click()
    expect(page.locator("#undo")).to_contain_text(f": {MANY} ", timeout=WAIT)
    snoozed = archive_and_snooze.get(redis, "ann")["snoozed"]
    assert snoozed == {i: until for i in sent} and not set(steps) & set(snoozed)
    assert len(requests) == 1 and "/matching?" in requests[0][0], requests
    assert requests[0][1] == {"action": "snooze", "until": until}, "by filter, not by id"
    expect(rows(page)).to_have_count(0, timeout=WAIT)
    expect(page.locator("#tab-inbox .tab-count")).to_have_text("")  # none left unread
    page.click("#undo .undo")
    expect_one_page(page)
    wait_for(lambda: archive_and_snooze.get(redis, "ann")["snoozed"], lambda s: s == {},
             message="every one woken")


def test_no_offer_when_every_match_is_selected_already(live_server, ann, page):
    for i in range(5):
        ann.publish("bulk.item", f"item {i}")
    sign_in(page, live_server, "ann", "ann-password")
    expect(rows(page)).to_have_count(5, timeout=WAIT)
    with page.expect_response(lambda r: "/api/notification-state/matching" in r.url):
        page.click(".select-all")
    expect(page.locator(".bulk-count")).to_contain_text("5 selected")
    expect(page.locator(".select-matching")).to_be_hidden()
