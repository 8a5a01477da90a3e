"""The dashboard in real headless Chromium against a live server."""
import pytest
from playwright.sync_api import expect

from app.users import accounts
from tests.integration.e2e.conftest import dashboard_of_ann, sign_in, subscribe

PAGE_WAIT = 2_000  # ms: a notification must show within 2 s of its publish


@pytest.fixture
def dashboard(live_server, redis, page):
    accounts.create_user(redis, "ann", "ann-password")
    sign_in(page, live_server, "ann", "ann-password")
    return page


def feed_items(page):
    return page.locator("#feed li.notification")


def test_subscribed_notification_appears_in_feed_and_badge(dashboard, live_server, api_key):
    page = dashboard
    subscribe(page, "deploy")
    unread = page.locator("#tab-inbox .tab-count")
    expect(unread).to_have_text("")
    sent = live_server.publish(api_key, topic="deploy.web", title="Web deployed",
                               body="build 42", severity="success")
    item = page.locator(f'#feed li[data-id="{sent}"]')
    expect(item).to_be_visible(timeout=PAGE_WAIT)
    expect(item.locator(".title")).to_have_text("Web deployed")
    expect(item.locator(".body")).to_have_text("build 42")
    assert "severity-success" in item.get_attribute("class")
    expect(unread).to_have_text("1", timeout=PAGE_WAIT)
    # Shown on the screen: seen, not read; the badge counts unread as the tab does.
    expect(page.locator("#badge .badge-count")).to_have_text("1")
    page.click(".mark-all-read")
    expect(unread).to_have_text("")
    expect(item).not_to_have_class("unread")


def test_unsubscribed_topic_does_not_appear(dashboard, live_server, api_key):
    page = dashboard
    subscribe(page, "deploy")
    live_server.publish(api_key, topic="billing.invoice", title="Not for this feed")
    marker = live_server.publish(api_key, topic="deploy.marker", title="Marker")
    expect(page.locator(f'#feed li[data-id="{marker}"]')).to_be_visible(timeout=PAGE_WAIT)
    # The marker was published after, so the other one had its chance to arrive.
    expect(feed_items(page)).to_have_count(1)
    assert page.locator('#feed li[data-topic="billing.invoice"]').count() == 0


def test_html_payload_renders_as_text(dashboard, live_server, api_key):
    page = dashboard
    subscribe(page, "xss")
    title = '<img src=x onerror="window.pwned=1"><b>bold?</b>'
    sent = live_server.publish(api_key, topic="xss.try", title=title, body="<script>window.pwned=2</script>")
    item = page.locator(f'#feed li[data-id="{sent}"]')
    expect(item.locator(".title")).to_have_text(title, timeout=PAGE_WAIT)
    expect(item.locator(".body")).to_have_text("<script>window.pwned=2</script>")
    assert item.locator("img, b, script").count() == 0
    assert page.evaluate("window.pwned") is None


def test_warning_shows_a_toast(dashboard, live_server, api_key):
    page = dashboard
    subscribe(page, "ops")
    live_server.publish(api_key, topic="ops.disk", title="Disk nearly full", severity="warning")
    live_server.publish(api_key, topic="ops.info", title="Just info")
    expect(page.locator("#toasts .toast .title")).to_have_text(["Disk nearly full"], timeout=PAGE_WAIT)


def test_a_warning_that_came_while_the_view_was_read_again_still_toasts(live_server, redis, page, api_key):
    """A new subscription reads the view again. A warning published after that read
    but brought by the socket before its reply was dropped from the toast by the
    view's reset (the reply does not hold it yet), and never shown: the CI of stop 48
    failed test_warning_shows_a_toast this way."""
    page = dashboard_of_ann(page, live_server, redis, "ops")
    held = []
    page.route("**/api/notifications?*", lambda route: held.append(route))
    subscribe(page, "db")  # the view is read again
    while not held:
        page.wait_for_timeout(20)  # route handlers run while Playwright waits
    read = held[0].fetch()  # the server reads the view now, before the warning exists
    sent = live_server.publish(api_key, topic="ops.disk", title="Disk nearly full", severity="warning")
    expect(page.locator(f'#feed li[data-id="{sent}"]')).to_be_visible(timeout=PAGE_WAIT)
    held[0].fulfill(response=read)
    page.unroute("**/api/notifications?*")
    page.wait_for_function("() => herald.notifications.loaded === true")
    expect(page.locator(f'#feed li[data-id="{sent}"]')).to_be_visible()
    expect(page.locator("#toasts .toast .title")).to_have_text(["Disk nearly full"], timeout=PAGE_WAIT)
    expect(page.locator("#announcer")).to_have_text("New warning: Disk nearly full")


def test_a_warning_the_view_read_before_the_socket_brought_it_still_toasts_once(
        dashboard, live_server, api_key):
    """A reload of the view (a new subscription, a filter) can read a notification
    over REST before the socket brings it: it is news all the same, shown once."""
    page = dashboard
    subscribe(page, "ops")
    page.evaluate("herald.client.socket.disconnect()")
    sent = live_server.publish(api_key, topic="ops.disk", title="Disk nearly full", severity="warning")
    page.evaluate("herald.views.feed.collection.load(herald.views.feed.collection.criteria)")
    expect(page.locator(f'#feed li[data-id="{sent}"]')).to_be_visible(timeout=PAGE_WAIT)
    expect(page.locator("#toasts .toast")).to_have_count(0)
    page.evaluate("herald.client.socket.connect()")
    expect(page.locator("#toasts .toast .title")).to_have_text(["Disk nearly full"], timeout=PAGE_WAIT)
    expect(page.locator("#announcer")).to_have_text("New warning: Disk nearly full")
    marker = live_server.publish(api_key, topic="ops.marker", title="Marker")
    expect(page.locator(f'#feed li[data-id="{marker}"]')).to_be_visible(timeout=PAGE_WAIT)
    expect(page.locator("#toasts .toast")).to_have_count(1)


def test_unsubscribe_from_the_panel(dashboard, live_server, api_key):
    page = dashboard
    subscribe(page, "news")
    page.click('#subscriptions li[data-topic="news"] .unsubscribe')
    expect(page.locator('#subscriptions li[data-topic="news"]')).to_have_count(0)
    subscribe(page, "marker")
    live_server.publish(api_key, topic="news.x", title="gone")
    marker = live_server.publish(api_key, topic="marker", title="marker")
    expect(page.locator(f'#feed li[data-id="{marker}"]')).to_be_visible(timeout=PAGE_WAIT)
    expect(feed_items(page)).to_have_count(1)


def test_bad_subscription_shows_the_error(dashboard):
    page = dashboard
    page.fill("#subscriptions input[name=topic]", "Not A Topic")
    page.click("#subscriptions button[type=submit]")
    expect(page.locator("#subscriptions .error")).to_contain_text("topics[0]")


def test_indicator_shows_reconnecting_when_the_server_goes_away(dashboard, live_server):
    page = dashboard
    expect(page.locator("#connection")).to_have_text("connected")
    live_server.kill()
    expect(page.locator("#connection")).to_have_text("reconnecting", timeout=5_000)


def test_admin_publishes_from_the_dashboard(live_server, redis, page):
    accounts.create_user(redis, "root", "root-password", admin=True)
    sign_in(page, live_server, "root", "root-password")
    subscribe(page, "*")
    page.click("#publish summary")  # folded under Subscriptions (issue 38)
    page.fill("#publish input[name=topic]", "ops.manual")
    page.fill("#publish input[name=title]", "Hello from the form")
    page.select_option("#publish select[name=severity]", "error")
    page.click("#publish button[type=submit]")
    expect(page.locator("#publish .status")).to_contain_text("published")
    expect(feed_items(page).locator(".title")).to_have_text(["Hello from the form"], timeout=PAGE_WAIT)
    page.fill("#publish input[name=topic]", "Bad Topic")
    page.fill("#publish input[name=title]", "x")
    page.click("#publish button[type=submit]")
    expect(page.locator("#publish .status")).to_contain_text("topic: ")


def test_non_admin_has_no_publish_form(dashboard):
    assert dashboard.locator("#publish").count() == 0


def test_indicator_shows_offline_and_recovers(dashboard, context):
    page = dashboard
    context.set_offline(True)
    expect(page.locator("#connection")).to_have_text("offline")
    context.set_offline(False)
    expect(page.locator("#connection")).to_have_text("connected", timeout=10_000)
