"""The Digests page in Chromium: create, edit, pause, preview and delete a digest."""
import pytest
from playwright.sync_api import expect

from app import accounts
from app.bus import Bus
from app.digests import store
from tests.e2e.conftest import open_as_admin, sign_in
from app.digests.collect import Collector


@pytest.fixture
def digests_page(live_server, redis, page):
    return open_as_admin(page, live_server, redis, "Digests")


def fill(page, **fields):
    for name, value in fields.items():
        page.fill(f"#digest-form [name={name}]", value)


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
    page.click("#digest-form button[type=submit]")
    expect(page.locator("#digest-form .status")).to_have_text("saved")
    expect(row).to_contain_text("0 9 * * mon-fri")
    assert store.get(redis, record["id"])["schedule"] == "0 9 * * mon-fri"

    Bus(redis).publish("ops.db", "Replica <b>lagging</b>", severity="error")
    collector = Collector(redis)
    while collector.step(block_ms=10):
        pass
    row.locator(".preview").click()
    expect(page.locator("#preview .preview-subject")).to_contain_text("Herald digest: 1 notification (1 error)")
    expect(page.locator("#preview .preview-text")).to_contain_text("Replica <b>lagging</b>")
    frame = page.frame_locator("#preview .preview-html")
    expect(frame.locator("li")).to_contain_text("Replica <b>lagging</b>")

    row.locator(".delete").click()
    expect(page.locator("#digest-rows tr")).to_have_count(0)
    assert store.list_all(redis) == []


def test_non_admins_have_no_digests_page(live_server, redis, page):
    accounts.create_user(redis, "bob", "bob-password")
    sign_in(page, live_server, "bob", "bob-password")
    assert page.locator("nav a:has-text('Digests')").count() == 0
    assert page.goto(live_server.url + "/digests").status == 403
