"""Every page, on a desktop and a phone: no horizontal scroll, one h1, the navigation
marks the current page, and axe-core finds no serious or critical violation."""
import time

import orjson
import pytest
from playwright.sync_api import expect

from app.ops import heartbeats
from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import (
    DESKTOP,
    PHONE,
    accessibility_violations,
    horizontal_overflow,
    sign_in,
)


def check_page(page, what):
    assert horizontal_overflow(page) == 0, f"{what}: wider than the screen"
    assert page.locator("h1").count() == 1, f"{what}: not exactly one h1"
    violations = accessibility_violations(page)
    assert violations == [], f"{what}: {violations}"


@pytest.mark.parametrize("viewport,scheme", [(DESKTOP, "light"), (PHONE, "light"),
                                             ({"width": 360, "height": 740}, "light"),
                                             (DESKTOP, "dark"), (PHONE, "dark")],
                         ids=["desktop", "phone", "360px", "desktop-dark", "phone-dark"])
def test_every_page_fits_and_passes_axe(live_server, redis, browser, viewport, scheme):
    accounts.create_user(redis, "root", "root-password", admin=True)
    subscriptions.add(redis, "root", ["ops"], limit=10)
    bus = Bus(redis)
    for i in range(3):
        bus.publish("ops.deploy", f"Deploy {i} finished", body="All hosts healthy " * 5,
                    severity=["info", "warning", "critical"][i], url="https://example.com/run",
                    data={"build": i, "hosts": ["web-1", "web-2"], "note": "x" * 120})
    sent = bus.publish("ops.deploy", "A very long title " * 8, body="word" * 80)
    for role, age in (("archiver", 0), ("bridge", 0), ("digest", 60)):  # the last one missing
        redis.hset(heartbeats.BEATS, f"{role}/a-long-host-name.example.com:4242", orjson.dumps(
            {"role": role, "instance": "a-long-host-name.example.com:4242", "at": time.time() - age,
             "every": 5, "started": time.time() - 600,
             "details": {"position": "1700000000000-0", "backlog": 3, "leader": True}}))
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    page = context.new_page()
    try:
        page.goto(live_server.url + "/login")
        check_page(page, "login")
        sign_in(page, live_server, "root", "root-password")
        expect(page.locator("#feed li.notification")).to_have_count(4)
        check_page(page, "feed")
        expect(page.locator("nav a[aria-current=page]")).to_have_text("Feed")
        page.locator(f'#feed li[data-id="{sent}"] button.open').focus()  # its actions show
        page.locator(f'#feed li[data-id="{sent}"]').get_by_role(  # the snooze menu open
            "button", name="Snooze", exact=True).click()
        check_page(page, "feed, snooze menu open")
        page.goto(live_server.url + f"/?n={sent}")
        expect(page.locator("#detail h2")).to_be_visible()
        check_page(page, "detail")
        for path, link in (("/preferences", "Preferences"), ("/jobs", "Jobs"), ("/digests", "Digests"),
                           ("/webhooks", "Webhooks"), ("/ops", "Operations")):
            page.goto(live_server.url + path)
            page.wait_for_selector("#connection[data-state=connected]")
            expect(page.locator("nav a[aria-current=page]")).to_have_text(link)
            check_page(page, path)
            if path == "/preferences":
                page.click("#preferences .add-rule")
                check_page(page, "preferences with a rule")
        reply = page.goto(live_server.url + "/no/such/page")
        assert reply.status == 404
        expect(page.locator("h1")).to_have_text("There is nothing here")
        check_page(page, "404")
    finally:
        context.close()


def test_forbidden_page_is_styled_in_the_app_frame(live_server, redis, page):
    accounts.create_user(redis, "ann", "ann-password")
    sign_in(page, live_server, "ann", "ann-password")
    reply = page.goto(live_server.url + "/jobs")
    assert reply.status == 403
    expect(page.locator("h1")).to_have_text("This page is not yours to see")
    expect(page.locator("nav a", has_text="Feed")).to_be_visible()
    assert accessibility_violations(page) == []


def test_the_theme_switch_overrides_the_system_and_is_kept(live_server, redis, page):
    """Dark colours follow prefers-color-scheme; the switch at the foot of every page
    picks one for this browser, before the page paints, across pages and reloads."""
    accounts.create_user(redis, "ann", "ann-password")
    sign_in(page, live_server, "ann", "ann-password")

    def background():
        return page.evaluate("getComputedStyle(document.body).backgroundColor")

    light = background()
    page.select_option("#theme", "dark")
    assert background() != light
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.goto(live_server.url + "/preferences")
    expect(page.locator("#theme")).to_have_value("dark")
    dark = background()
    assert dark != light
    assert accessibility_violations(page) == []
    page.select_option("#theme", "")
    assert background() == light
    page.reload()
    assert page.evaluate("document.documentElement.dataset.theme") is None
