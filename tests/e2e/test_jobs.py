"""The Jobs page in Chromium: a rollup launched from the button shows its progress live."""
import subprocess

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import open_as_admin
from tests.spark.archive import generate
from tests.support import wait_until

RECORD = """() => {
  window.percents = [];
  herald.jobs.on('change:percent', function (job) { window.percents.push(job.get('percent')); });
}"""


def job_processes(correlation_id):
    found = subprocess.run(["pgrep", "-f", correlation_id], capture_output=True, text=True)
    return found.stdout.split()


@pytest.fixture
def admin_on_jobs(live_server, redis, page):
    return open_as_admin(page, live_server, redis, "Jobs")


def test_progress_bar_appears_fills_and_shows_the_result(admin_on_jobs, tmp_path):
    page = admin_on_jobs
    generate(tmp_path / "archive", 150_000)  # the live server's VAR_DIR is tmp_path
    expect(page.locator("#rollup .rollup-state")).to_contain_text("No rollup yet")
    page.evaluate(RECORD)
    page.click("#run-rollup")
    expect(page.locator("#run-status")).to_contain_text("started spark-rollup-")
    correlation_id = page.locator("#run-status").inner_text().split()[-1]
    card = page.locator(f'#jobs li[data-id="{correlation_id}"]')
    expect(card).to_have_attribute("data-status", "running", timeout=60_000)
    expect(card).to_have_attribute("data-status", "succeeded", timeout=180_000)
    expect(card.locator(".outcome")).to_contain_text("rows written")
    assert card.locator(".progress").get_attribute("aria-valuenow") == "100"
    percents = page.evaluate("window.percents")
    assert percents == sorted(percents) and percents[-1] == 100
    assert any(0 < p < 100 for p in percents), f"no progress seen between 0 and 100: {percents}"
    expect(page.locator("#rollup .rollup-state")).to_contain_text("150,000 notifications")
    assert page.locator("#rollup svg rect").count() > 0
    expect(page.locator("#rollup tbody tr")).to_have_count(5)
    wait_until(lambda: not job_processes(correlation_id), timeout=60, message="the job to exit")


def test_a_failed_run_shows_its_error(admin_on_jobs):
    page = admin_on_jobs  # no archive at all
    page.click("#run-rollup")
    expect(page.locator("#run-status")).to_contain_text("started spark-rollup-")
    correlation_id = page.locator("#run-status").inner_text().split()[-1]
    card = page.locator(f'#jobs li[data-id="{correlation_id}"]')
    expect(card).to_have_attribute("data-status", "failed", timeout=180_000)
    expect(card.locator(".outcome")).to_contain_text("ArchiveError: archive not found")
    wait_until(lambda: not job_processes(correlation_id), timeout=60, message="the job to exit")


def test_any_correlation_id_a_publisher_chooses_shows_as_a_job(admin_on_jobs, redis):
    """Ids that are also object keys or CSS syntax: each is a job card of its own."""
    from app.bus import Bus
    page = admin_on_jobs
    bus = Bus(redis)
    strange = ['x"]', "constructor", "__proto__", "toString"]
    for correlation_id in strange:
        bus.publish("spark.job.started", "started", correlation_id=correlation_id,
                    data={"job": "odd"})
        bus.publish("spark.job.succeeded", "done", correlation_id=correlation_id,
                    data={"job": "odd", "duration_s": 1})
    cards = page.locator("#jobs li.job")
    expect(cards).to_have_count(len(strange), timeout=10_000)
    shown = sorted(cards.nth(i).get_attribute("data-id") for i in range(len(strange)))
    assert shown == sorted(strange)
    for i in range(len(strange)):
        assert cards.nth(i).get_attribute("data-status") == "succeeded"
