"""Honest status in the browser: Redis paused, pages asked for while it is away, the
web process stopped. What people see is a banner at the top (not only a live
region), a connection pill that admits Redis trouble, a styled 503 page that
comes back by itself instead of a 500, and "Retry now" that reconnects."""
import contextlib
import os
import re
import signal

import pytest
from playwright.sync_api import expect

from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import (
    AXE,
    PHONE,
    WCAG,
    accessibility_violations,
    horizontal_overflow,
    sign_in,
)
from tests.support import own_stack

OUTAGE_HEADING = "This page cannot be shown right now"
PAGES = ["/", "/preferences", "/jobs", "/digests", "/webhooks", "/ops"]


@pytest.fixture
def stack(tmp_path):
    """A redis-server of its own (it gets paused) and a web server on it."""
    with own_stack(tmp_path) as (redis_server, client, server):
        accounts.create_user(client, "ann", "ann-password")
        accounts.create_user(client, "root", "root-password", admin=True)
        subscriptions.add(client, "ann", ["ops"], limit=10)
        yield redis_server, server


@contextlib.contextmanager
def paused(redis_server):
    """Redis stopped in its tracks (SIGSTOP): connections stay open, nothing answers,
    as with a hung or overloaded Redis; SIGCONT afterwards, whatever happened."""
    os.kill(redis_server.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(redis_server.process.pid, signal.SIGCONT)


def banner_violations(page):
    """axe on the banner and the header only (the pill): what this feature adds."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text())
    return page.evaluate(
        "(tags) => axe.run({include: [['#status-banner'], ['header']]}, "
        "{runOnly: {type: 'tag', values: tags}})"
        ".then(r => r.violations.map(v => ({id: v.id, nodes: v.nodes.map(n => n.target.join(' '))})))",
        WCAG)


# Every text the banner's live region takes from now on, in window.bannerSaid.
SAID = """() => {
  window.bannerSaid = [];
  var region = document.querySelector('#status-banner [role=status]');
  new MutationObserver(function () { window.bannerSaid.push(region.textContent); })
    .observe(region, {childList: true, subtree: true, characterData: true});
}"""


def banner_height(page):
    return page.locator("#status-banner").bounding_box()["height"]


def test_redis_paused_shows_a_banner_and_the_pill_says_so_until_it_is_back(stack, page):
    redis_server, server = stack
    sign_in(page, server, "ann", "ann-password")
    banner = page.locator("#status-banner")
    expect(banner).to_have_attribute("data-problem", "")
    assert banner_height(page) == 0, "all well: the banner takes no room"
    with paused(redis_server):
        page.wait_for_selector("#status-banner[data-problem=redis]")
        text = page.locator("#status-banner [role=status]")
        expect(text).to_contain_text("Herald cannot reach its database (Redis)")
        expect(text).to_contain_text("You can keep reading what is shown")
        expect(page.locator("#status-banner .status-when")).to_contain_text("checks again")
        expect(page.locator("#connection")).to_have_attribute("data-state", "degraded")
        expect(page.locator("#connection")).to_have_text("connected, Redis unreachable")
        box = banner.bounding_box()
        assert box["height"] > 20 and box["y"] < page.locator("h1").bounding_box()["y"], \
            "a visible banner above the page's content"
        assert banner_violations(page) == []
        page.emulate_media(color_scheme="dark")
        assert banner_violations(page) == [], "readable in dark colours too"
        page.set_viewport_size({"width": 360, "height": 740})
        assert horizontal_overflow(page) == 0
        expect(page.locator("#status-banner .status-retry-now")).to_be_hidden()  # the socket is fine
        # The socket lost too: reconnects are refused while Redis is away, and the
        # banner keeps saying why, now with the next try and "Retry now".
        page.evaluate(SAID)
        page.evaluate("herald.client.socket.io.engine.close()")
        expect(page.locator("#status-banner .status-retry-now")).to_be_visible(timeout=15_000)
        expect(page.locator("#status-banner .status-when")).to_have_text(
            re.compile(r"Next try in \d+ s\."), timeout=15_000)  # after a refusal
        expect(text).to_contain_text("Herald cannot reach its database (Redis)")
        said = page.evaluate("window.bannerSaid")
        assert not [s for s in said if "Redis" not in s], f"it said something else meanwhile: {said}"
    page.wait_for_selector("#connection[data-state=connected]", timeout=30_000)
    page.wait_for_selector("#status-banner[data-problem='']", state="attached")
    expect(page.locator("#status-banner [role=status]")).to_have_text("")
    assert banner_height(page) == 0


def test_pages_asked_for_while_redis_is_away_are_a_styled_503_that_comes_back_by_itself(stack, page):
    redis_server, server = stack
    sign_in(page, server, "root", "root-password")
    with paused(redis_server):
        for path in PAGES:  # the first one before the server has noticed, the rest after
            reply = page.goto(server.url + path)
            assert reply.status == 503, path
            expect(page.locator("h1")).to_have_text(OUTAGE_HEADING)
            expect(page.locator("#status-banner")).to_have_attribute("data-problem", "outage")
            expect(page.locator("#status-banner [role=status]")).to_contain_text(
                "Herald cannot reach its database (Redis)")
            expect(page.locator("#status-banner .status-retry-now")).to_be_visible()
        expect(page.locator("#status-banner .status-when")).to_contain_text(re.compile(r"Next try|now"))
        assert accessibility_violations(page) == []
        page.set_viewport_size(PHONE)
        assert horizontal_overflow(page) == 0
        assert page.goto(server.url + "/login").status == 200  # needs no Redis
        page.goto(server.url + "/ops")
        expect(page.locator("h1")).to_have_text(OUTAGE_HEADING)
    # Redis is back: the outage page loads the page itself, no reload by hand.
    page.wait_for_selector("#connection[data-state=connected]", timeout=45_000)
    assert page.url == server.url + "/ops"
    expect(page.locator("h1")).not_to_have_text(OUTAGE_HEADING)
    log = server.log_path.read_text()
    assert "Traceback" not in log and '"level":"ERROR"' not in log, "no unhandled exception"
    assert re.search(r'"level":"WARNING".*GET /: Redis is unreachable', log), "logged as a warning"


def test_with_the_server_stopped_the_banner_says_offline_and_when_and_retry_now_reconnects(stack, page):
    redis_server, server = stack
    sign_in(page, server, "ann", "ann-password")
    page.goto(server.url + "/preferences")
    page.wait_for_selector("#connection[data-state=connected]")
    # The client's next try is a minute away, so only "Retry now" can bring it back here.
    page.evaluate("herald.client.lost.next = function () { return 60000; }")
    server.kill()
    page.wait_for_selector("#status-banner[data-problem=server]")
    expect(page.locator("#status-banner [role=status]")).to_contain_text("Offline: Herald cannot be reached")
    expect(page.locator("#status-banner [role=status]")).to_contain_text("You can keep reading")
    when = page.locator("#status-banner .status-when")
    expect(when).to_have_text(re.compile(r"Next try in \d+ s\."))
    assert int(re.search(r"\d+", when.inner_text()).group()) > 30
    assert accessibility_violations(page) == []
    page.set_viewport_size(PHONE)
    assert horizontal_overflow(page) == 0
    server.start()
    page.click("#status-banner .status-retry-now")
    page.wait_for_selector("#connection[data-state=connected]", timeout=15_000)
    page.wait_for_selector("#status-banner[data-problem='']", state="attached")
    expect(page.locator("#status-banner [role=status]")).to_have_text("")


ACTION_ERRORS = """() => {
  window.actionErrors = [];
  herald.dispatcher.on('action:error', function (message, detail) {
    window.actionErrors.push({message: message, status: detail && detail.status,
                              retryable: detail && detail.retryable, action: detail && detail.action});
  });
}"""


def test_a_change_that_cannot_be_saved_says_so_plainly(stack, page):
    """Saving with Herald down said only "Failed to fetch", where nobody looked."""
    redis_server, server = stack
    sign_in(page, server, "ann", "ann-password")
    page.goto(server.url + "/preferences")
    page.wait_for_selector("#connection[data-state=connected]")
    page.evaluate(ACTION_ERRORS)
    status = page.locator("#preferences .status")
    with paused(redis_server):
        page.click("#preferences button[type=submit]")
        expect(status).to_have_text("Herald is unreachable (its database, Redis, is not answering): "
                                    "your change was not saved.", timeout=15_000)
    server.kill()
    page.click("#preferences button[type=submit]")
    expect(status).to_have_text("Herald is unreachable: your change was not saved.")
    assert page.evaluate("window.actionErrors") == [
        {"message": "Herald is unreachable (its database, Redis, is not answering): your change was "
                    "not saved.", "status": 503, "retryable": True, "action": "send"},
        {"message": "Herald is unreachable: your change was not saved.", "status": 0,
         "retryable": True, "action": "send"},
    ]
