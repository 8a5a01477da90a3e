"""The subscription box suggests the topics of the recent history, with counts, in real
Chromium: a new user sees the popular names, types, picks one by keyboard, and is
subscribed; the page announces ``subscribed`` (the feed backfills on it). Another
user's private topics are never suggested."""
import pytest
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts
from tests.integration.e2e.conftest import (
    DESKTOP,
    PHONE,
    accessibility_violations,
    horizontal_overflow,
    sign_in,
)

LISTEN = """() => {
  window.subscribedEvents = [];
  herald.dispatcher.on('subscribed', function (event) { window.subscribedEvents.push(event); });
}"""


@pytest.fixture
def history(redis):
    """Public history on spark, ops and billing; eve alone has notifications on hr."""
    accounts.create_user(redis, "eve", "eve-password")
    bus = Bus(redis)
    for topic, count in (("spark.job.succeeded", 12), ("spark.job.failed", 3), ("ops.disk", 5),
                         ("billing.invoice", 2)):
        for i in range(count):
            bus.publish(topic, f"{topic} {i}")
    bus.publish("hr.review", "eve's review", user="eve")
    bus.publish("hr.salary", "eve's salary", user="eve")


@pytest.fixture
def newcomer(live_server, redis, page, history):
    accounts.create_user(redis, "ann", "ann-password")
    sign_in(page, live_server, "ann", "ann-password")
    page.evaluate(LISTEN)
    return page


def options(page):
    return page.locator("#subscriptions [role=listbox] [role=option]")


def test_a_new_user_sees_popular_names_with_counts_and_no_private_topic(newcomer):
    page = newcomer
    popular = page.locator("#subscriptions .popular button")
    expect(popular).to_have_text(["spark (15)", "ops (5)", "billing (2)"])
    page.click("#subscriptions input[name=topic]")
    page.keyboard.type("r")  # in every name above, and in hr's
    expect(options(page).first).to_be_visible()
    names = options(page).locator(".suggestion-name").all_inner_texts()
    assert names and not [n for n in names if n.startswith("hr")], names
    assert "hr." not in page.locator("#subscriptions").inner_text()


def test_suggestions_as_one_types_picked_by_keyboard_subscribe(newcomer):
    page = newcomer
    box = page.locator("#subscriptions input[name=topic]")
    box.click()
    page.keyboard.type("sp")
    expect(box).to_have_attribute("aria-expanded", "true")
    expect(options(page).locator(".suggestion-name")).to_have_text(
        ["spark", "spark.job", "spark.job.succeeded", "spark.job.failed"])
    expect(options(page).locator(".suggestion-count")).to_have_text(
        ["15 notifications", "15 notifications", "12 notifications", "3 notifications"])
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    chosen = options(page).nth(1)
    expect(chosen).to_have_attribute("aria-selected", "true")
    expect(box).to_have_attribute("aria-activedescendant", chosen.get_attribute("id"))
    page.keyboard.press("Enter")
    expect(page.locator('#subscriptions li[data-topic="spark.job"]')).to_be_visible()
    page.wait_for_function("() => window.subscribedEvents.length === 1")
    assert page.evaluate("window.subscribedEvents") == [{"added": ["spark.job"]}]
    expect(box).to_have_value("")
    expect(box).to_be_focused()
    expect(page.locator("#subscriptions .popular")).to_be_hidden()  # no longer new here
    # Escape closes the list and leaves what was typed.
    page.keyboard.type("o")
    expect(options(page)).not_to_have_count(0)
    page.keyboard.press("Escape")
    expect(page.locator("#subscriptions [role=listbox]")).to_be_hidden()
    expect(box).to_have_attribute("aria-expanded", "false")
    expect(box).to_have_value("o")


def test_a_popular_name_subscribes_with_one_click(newcomer):
    page = newcomer
    page.click("#subscriptions .popular button:has-text('ops')")
    expect(page.locator('#subscriptions li[data-topic="ops"]')).to_be_visible()
    page.wait_for_function("() => window.subscribedEvents.length === 1")
    assert page.evaluate("window.subscribedEvents") == [{"added": ["ops"]}]


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_open_list_fits_and_passes_axe(newcomer, viewport):
    page = newcomer
    page.set_viewport_size(viewport)
    page.click("#subscriptions input[name=topic]")
    page.keyboard.type("s")
    page.keyboard.press("ArrowDown")
    expect(options(page).first).to_have_attribute("aria-selected", "true")
    assert horizontal_overflow(page) == 0
    assert accessibility_violations(page) == []
