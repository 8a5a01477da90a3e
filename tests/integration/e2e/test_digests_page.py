"""The Digests page in Chromium: create, edit, pause, preview and delete a digest; the
email preview as the email looks; a digest deleted elsewhere; schedules in words;
times in the browser's zone (see local_zone)."""
import pytest
from playwright.sync_api import expect

from app.digests import store
from app.digests.collect import Collector
from app.stream.publish import Bus
from app.users import accounts
from tests.integration.e2e.conftest import (
    accessibility_violations,
    no_horizontal_scroll,
    open_as_admin,
    sign_in,
)
from tests.integration.e2e.local_zone import assert_local_times, context  # noqa: F401  (context: the fixture)


@pytest.fixture
def digests_page(live_server, redis, page):
    return open_as_admin(page, live_server, redis, "Digests")


def fill(page, **fields):
    for name, value in fields.items():
        page.fill(f"#digest-form [name={name}]", value)


def collect(redis):
    """Let the digest collector take in what was published."""
    collector = Collector(redis)
    while collector.step(block_ms=10):
        pass


def errors_of(page):
    """Uncaught errors of the page's scripts, from now on."""
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def test_manage_a_digest_from_the_page(digests_page, redis):
    page = digests_page
    expect(page.locator("#digests-empty")).to_be_visible()
    fill(page, email="not-an-email-address", topics="ops")
    page.click("#digest-form button[type=submit]")
    expect(page.locator("#digest-form .status")).to_contain_text("email: ")

    fill(page, email="ops@example.com", topics="ops, spark", schedule="daily@07:30",
         timezone="Europe/Paris")
    page.select_option("#digest-form [name=min_severity]", "warning")
    page.check("#digest-form [name=critical_now]")
    page.click("#digest-form button[type=submit]")
    expect(page.locator("#digest-form .status")).to_have_text("created")
    [record] = store.list_all(redis, "root")
    assert (record["email"], record["topics"], record["min_severity"], record["schedule"],
            record["timezone"], record["critical_now"]) == (
        "ops@example.com", ["ops", "spark"], "warning", "daily@07:30", "Europe/Paris", True)
    row = page.locator(f'#digest-rows tr[data-id="{record["id"]}"]')
    expect(row).to_contain_text("ops, spark")

    row.locator(".toggle").click()
    expect(row.locator(".state")).to_have_text("paused")
    assert store.get(redis, record["id"])["enabled"] is False
    row.locator(".toggle").click()
    expect(row.locator(".state")).to_have_text("enabled")

    row.locator(".edit").click()
    fill(page, schedule="Not a schedule")
    page.click("#digest-form button[type=submit]")
    expect(page.locator("#digest-form .status")).to_contain_text("schedule: ")
    fill(page, schedule="0 9 * * mon-fri")
    expect(page.locator("#schedule-words")).to_have_text("At 09:00, Monday through Friday")
    page.click("#digest-form button[type=submit]")
    expect(page.locator("#digest-form .status")).to_have_text("saved")
    expect(row.locator(".schedule")).to_contain_text("0 9 * * mon-fri")
    expect(row.locator(".schedule-words")).to_have_text("At 09:00, Monday through Friday")
    assert store.get(redis, record["id"])["schedule"] == "0 9 * * mon-fri"

    Bus(redis).publish("ops.db", "Replica <b>lagging</b>", severity="error")
    collect(redis)
    row.locator(".preview").click()
    expect(page.locator("#preview .preview-subject")).to_contain_text(
        "Herald digest: 1 notification (1 error)")
    expect(page.locator("#preview .preview-text")).to_contain_text(  # folded away: not innerText
        "Replica <b>lagging</b>", use_inner_text=False)
    frame = page.frame_locator('#preview iframe[title="Email preview"]')
    expect(frame.locator("li")).to_contain_text("Replica <b>lagging</b>")
    # The email's own inline styles apply (this page's policy would refuse them).
    assert frame.locator("table").evaluate("t => getComputedStyle(t).borderCollapse") == "collapse"
    assert "system-ui" in frame.locator("body").evaluate("b => getComputedStyle(b).fontFamily")
    assert page.locator("#preview iframe").get_attribute("sandbox") == ""

    row.locator(".delete").click()  # asks first
    expect(row.locator(".confirm")).to_contain_text("Delete the digest for ops@example.com?")
    expect(row.locator(".cancel-delete")).to_be_focused()
    row.locator(".cancel-delete").click()
    expect(row.locator(".delete")).to_be_focused()
    assert len(store.list_all(redis)) == 1
    row.locator(".delete").click()
    row.locator(".confirm-delete").click()
    expect(page.locator("#digest-rows tr")).to_have_count(0)
    expect(page.locator("#digests-notice")).to_have_text("Deleted the digest for ops@example.com.")
    assert store.list_all(redis) == []


def test_non_admins_have_no_digests_page(live_server, redis, page):
    accounts.create_user(redis, "bob", "bob-password")
    sign_in(page, live_server, "bob", "bob-password")
    assert page.locator("nav a:has-text('Digests')").count() == 0
    assert page.goto(live_server.url + "/digests").status == 403


def test_editing_a_digest_deleted_meanwhile_says_so(digests_page, redis):
    page = digests_page
    errors = errors_of(page)
    record = store.create(redis, "root", {"email": "ops@example.com", "topics": ["ops"]})
    page.reload()
    row = page.locator(f'#digest-rows tr[data-id="{record["id"]}"]')
    row.locator(".edit").click()
    expect(page.locator("#form-title")).to_have_text("Edit the digest for ops@example.com")
    store.delete(redis, record["id"], "root")  # as another tab would
    fill(page, topics="ops, spark")
    page.click("#digest-form button[type=submit]")
    expect(page.locator("#digest-form .status")).to_contain_text(
        "This digest (ops@example.com) was deleted")
    expect(page.locator("#digest-rows tr")).to_have_count(0)
    expect(page.locator("#form-title")).to_have_text("New digest")
    assert store.list_all(redis) == [] and errors == []


@pytest.mark.parametrize("action", ["preview", "toggle", "delete"])
def test_any_action_on_a_digest_deleted_meanwhile_says_so(digests_page, redis, action):
    page = digests_page
    errors = errors_of(page)
    record = store.create(redis, "root", {"email": "ops@example.com", "topics": ["ops"]})
    page.reload()
    row = page.locator(f'#digest-rows tr[data-id="{record["id"]}"]')
    expect(row).to_be_visible()
    store.delete(redis, record["id"], "root")
    row.locator(f".{action}").click()
    if action == "delete":
        row.locator(".confirm-delete").click()
    expect(page.locator("#digests-notice")).to_contain_text("This digest (ops@example.com) was deleted")
    expect(page.locator("#digest-rows tr")).to_have_count(0)
    assert errors == []


def test_the_schedule_in_words_as_it_is_typed(digests_page):
    page = digests_page
    words = page.locator("#schedule-words")
    expect(words).to_have_text("Every day at 08:00")  # the form's default
    fill(page, schedule="*/15 * * * *")
    expect(words).to_have_text("Every 15 minutes")
    fill(page, schedule="0 9 * * 8")
    expect(words).to_contain_text("schedule: cron day-of-week field")
    expect(words).to_have_class("schedule-words error")
    fill(page, schedule="hourly")
    expect(words).to_have_text("Every hour, on the hour")
    expect(page.locator("#digest-form [name=schedule]")).to_have_attribute(
        "aria-describedby", "schedule-words schedule-help")


def test_delete_by_keyboard(digests_page, redis):
    page = digests_page
    record = store.create(redis, "root", {"email": "ops@example.com", "topics": ["ops"]})
    page.reload()
    row = page.locator(f'#digest-rows tr[data-id="{record["id"]}"]')
    row.locator(".delete").focus()
    page.keyboard.press("Enter")
    expect(row.locator(".cancel-delete")).to_be_focused()
    page.keyboard.press("Escape")  # no
    expect(row.locator(".delete")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Shift+Tab")
    expect(row.locator(".confirm-delete")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#digest-rows tr")).to_have_count(0)
    expect(page.locator("#digests-heading")).to_be_focused()
    assert store.list_all(redis) == []


def test_an_empty_preview_says_when_the_next_is_due_in_local_time(digests_page, redis):
    page = digests_page
    record = store.create(redis, "root", {"email": "ops@example.com", "topics": ["ops"],
                                          "schedule": "daily@08:00", "timezone": "UTC"})
    page.reload()
    page.locator(f'#digest-rows tr[data-id="{record["id"]}"] .preview').click()
    subject = page.locator("#preview .preview-subject")
    expect(subject).to_contain_text("Nothing collected yet; the next digest is due")
    assert_local_times(subject, 1)
    assert subject.locator("time").get_attribute("datetime").endswith("T08:00:00.000Z")
    expect(page.locator("#preview iframe")).to_be_hidden()
    page.click("#preview .close-preview")
    expect(page.locator("#preview")).to_be_hidden()
    expect(page.locator(f'#digest-rows tr[data-id="{record["id"]}"] .preview')).to_be_focused()


def test_the_page_on_a_phone(live_server, redis, page):
    """360 px wide: nothing scrolls sideways, one h1, every field labelled (axe, WCAG 2.1 AA)."""
    record = store.create(redis, "root", {"email": "a-rather-long-address@example.com",
                                          "topics": ["ops", "spark.job"], "schedule": "0 9 * * mon-fri",
                                          "timezone": "Europe/Paris"})
    Bus(redis).publish("ops.db", "Replica lagging", severity="error")
    collect(redis)
    page.set_viewport_size({"width": 360, "height": 740})
    open_as_admin(page, live_server, redis, "Digests")
    row = page.locator(f'#digest-rows tr[data-id="{record["id"]}"]')
    row.locator(".preview").click()
    expect(page.frame_locator("#preview iframe").locator("li")).to_contain_text("Replica lagging")
    row.locator(".delete").click()
    expect(row.locator(".confirm")).to_be_visible()
    assert page.locator("h1").all_inner_texts() == ["Email digests"]
    assert no_horizontal_scroll(page)
    assert accessibility_violations(page) == []
