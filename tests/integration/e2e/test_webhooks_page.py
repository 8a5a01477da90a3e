"""The Webhooks page in Chromium: register an endpoint (the secret shown once), watch its
deliveries' state (the real webhook worker, real loopback receivers), retry parked
ones, delete by keyboard; on a phone; axe-core clean; no CSP violation (conftest)."""
import pytest
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.webhooks import outbound, store
from tests.helpers.webhooks import LOOPBACK_ALLOWED, receivers, start_worker  # noqa: F401
from tests.integration.e2e.conftest import accessibility_violations, horizontal_overflow, open_as_admin
from tests.integration.e2e.local_zone import assert_local_times, context  # noqa: F401  (context: the fixture)
from tests.support import LiveServer

SLOW = 15_000  # ms: the page refreshes the figures every 5 s


@pytest.fixture
def server(redis_server, redis, tmp_path):
    """The web server, allowed to register loopback receivers."""
    live = LiveServer(redis_server.url, tmp_path, WEBHOOK_ALLOW=LOOPBACK_ALLOWED)
    live.start()
    yield live
    live.stop()


@pytest.fixture
def webhooks_page(server, redis, page):
    return open_as_admin(page, server, redis, "Webhooks")


def row_of(page, endpoint_id):
    return page.locator(f'#webhook-rows tr[data-id="{endpoint_id}"]')


def test_register_see_deliveries_and_the_secret_once(webhooks_page, redis, receivers,  # noqa: F811
                                                      start_worker):  # noqa: F811
    page = webhooks_page
    receiver = receivers()
    expect(page.locator("#webhooks-empty")).to_be_visible()
    page.fill("#webhook-form [name=url]", "http://10.0.0.5/hook")
    page.fill("#webhook-form [name=topics]", "ops")
    page.click("#webhook-form button[type=submit]")
    expect(page.locator("#webhook-form .status")).to_contain_text("url: 10.0.0.5 resolves to "
                                                                  "10.0.0.5, a private address")
    assert store.list_all(redis) == []

    page.fill("#webhook-form [name=url]", receiver.url)
    page.fill("#webhook-form [name=topics]", "ops, spark")
    page.select_option("#webhook-form [name=min_severity]", "warning")
    page.check("#webhook-form [name=private]")
    page.click("#webhook-form button[type=submit]")
    expect(page.locator("#webhook-form .status")).to_have_text("registered")
    [record] = store.list_all(redis)
    assert (record["url"], record["topics"], record["min_severity"], record["private"]) == (
        receiver.url, ["ops", "spark"], "warning", True)
    expect(page.locator("#new-secret")).to_be_focused()
    expect(page.locator("#new-secret-value")).to_have_value(record["secret"])
    page.click(".dismiss-secret")
    expect(page.locator("#new-secret")).to_be_hidden()
    expect(page.locator("#new-secret-value")).to_have_value("")
    page.reload()  # shown once: nowhere on the page any more
    assert record["secret"] not in page.content()

    start_worker()
    Bus(redis).publish("ops.db", "Replica lagging", severity="error")
    row = row_of(page, record["id"])
    expect(row.locator(".state")).to_contain_text("1 delivered", timeout=SLOW)
    expect(row.locator(".state")).to_contain_text("last success")
    assert_local_times(row.locator(".state"), 1)
    expect(row).to_contain_text("private notifications too")


def test_parked_deliveries_show_and_go_again(webhooks_page, redis, receivers,  # noqa: F811
                                             start_worker):  # noqa: F811
    page = webhooks_page
    receiver = receivers(status=404)
    record = store.create(redis, {"url": receiver.url, "topics": ["*"]}, "root",
                          allowed=outbound.allow_list(LOOPBACK_ALLOWED))
    start_worker(WEBHOOK_4XX_RETRIES="1")
    Bus(redis).publish("ops.db", "Lost in the void")
    page.reload()
    row = row_of(page, record["id"])
    expect(row.locator(".state")).to_contain_text("1 parked", timeout=SLOW)
    expect(row.locator(".state .error")).to_have_text("last error: HTTP 404")
    assert_local_times(row.locator(".state"), 1)
    receiver.status = 200
    row.locator(".retry").click()
    expect(page.locator("#webhooks-notice")).to_have_text(
        f"Delivering 1 parked notification to {receiver.url} again.")
    expect(row.locator(".state")).to_contain_text("1 delivered", timeout=SLOW)
    assert receiver.titles() == ["Lost in the void"]


def test_delete_by_keyboard(webhooks_page, redis):
    page = webhooks_page
    allowed = outbound.allow_list(LOOPBACK_ALLOWED)
    record = store.create(redis, {"url": "http://127.0.0.1:9/hook", "topics": ["ops"]}, "root",
                          allowed=allowed)
    page.reload()
    row = row_of(page, record["id"])
    row.locator(".delete").focus()
    page.keyboard.press("Enter")
    expect(row.locator(".cancel-delete")).to_be_focused()
    page.keyboard.press("Escape")  # no
    expect(row.locator(".delete")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Shift+Tab")
    expect(row.locator(".confirm-delete")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#webhook-rows tr")).to_have_count(0)
    expect(page.locator("#webhooks-heading")).to_be_focused()
    expect(page.locator("#webhooks-notice")).to_have_text("Deleted the webhook to "
                                                          "http://127.0.0.1:9/hook.")
    assert store.list_all(redis) == []


def test_the_page_on_a_phone(server, redis, page):
    """360 px wide: nothing scrolls sideways, one h1, axe-core (WCAG 2.1 AA) clean,
    with a row, its delete confirmation and a secret on show."""
    allowed = outbound.allow_list(LOOPBACK_ALLOWED)
    record = store.create(redis, {"url": "http://127.0.0.1:9/a/rather/long/path/for/a/hook",
                                  "topics": ["ops", "spark.job"], "private": True}, "root",
                          allowed=allowed)
    page.set_viewport_size({"width": 360, "height": 740})
    open_as_admin(page, server, redis, "Webhooks")
    page.fill("#webhook-form [name=url]", "http://127.0.0.1:9/other")
    page.fill("#webhook-form [name=topics]", "*")
    page.click("#webhook-form button[type=submit]")
    expect(page.locator("#new-secret")).to_be_visible()
    row_of(page, record["id"]).locator(".delete").click()
    expect(row_of(page, record["id"]).locator(".confirm")).to_be_visible()
    assert page.locator("h1").all_inner_texts() == ["Webhooks"]
    wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth)
        .map(e => e.tagName + '.' + e.className + '#' + e.id + ' '
                  + Math.round(e.getBoundingClientRect().right))""")
    assert horizontal_overflow(page) == 0, wide
    assert accessibility_violations(page) == []
