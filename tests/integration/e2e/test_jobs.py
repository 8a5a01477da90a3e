"""The Jobs page in Chromium: a rollup launched from the button shows its progress live;
one run at a time; the rollup's chart and times (in the browser's zone, see local_zone)."""
import json
import re
import subprocess

import pytest
from playwright.sync_api import expect

from app.spark import launcher
from app.stream.publish import Bus
from tests.integration.e2e.conftest import accessibility_violations, no_horizontal_scroll, open_as_admin
from tests.integration.e2e.local_zone import assert_local_times, context, local  # noqa: F401  (context: the fixture)
from tests.integration.spark.archive import generate
from tests.integration.spark.conftest import spark  # noqa: F401, F811  (the SparkSession fixture)
from tests.support import wait_until
from workers.spark.notifier import SparkJobNotifier

RECORD = """() => {
  window.percents = [];
  herald.jobs.on('change:percent', function (job) { window.percents.push(job.get('percent')); });
}"""


# The button's disabled state each time it changes, in order, from now on.
WATCH_BUTTON = """() => {
  window.buttonStates = [];
  var button = document.getElementById('run-rollup'), last = button.disabled;
  new MutationObserver(function () {
    if (button.disabled !== last) window.buttonStates.push(last = button.disabled);
  }).observe(button, {attributes: true, attributeFilter: ['disabled']});
}"""


def launched(page, click):
    """Press the button with ``click``; the correlation id the POST answered."""
    with page.expect_response(lambda r: r.url.endswith("/api/spark/rollup")
                              and r.request.method == "POST") as reply:
        click()
    assert reply.value.status == 202
    return reply.value.json()["correlation_id"]


def finish(redis, correlation_id, stage="failed"):
    """What a run's last notification says, sent as its job would (private to root)."""
    bus = Bus(redis)
    bus.publish("spark.job.started", "started", correlation_id=correlation_id, user="root",
                data={"job": "rollup"})
    bus.publish(f"spark.job.{stage}", stage, correlation_id=correlation_id, user="root",
                data={"job": "rollup", "duration_s": 1, "error_type": "Boom", "error_message": "x"})


def job_processes(correlation_id):
    found = subprocess.run(["pgrep", "-f", correlation_id], capture_output=True, text=True)
    return found.stdout.split()


@pytest.fixture
def admin_on_jobs(live_server, redis, page):
    """The Jobs page of a new admin, once its subscription to spark.job is in place: what
    is published to spark.job from then on arrives (publishing sooner raced it)."""
    page = open_as_admin(page, live_server, redis, "Jobs")
    expect(page.locator("#subscribed-note")).to_be_visible()
    return page


def test_progress_bar_appears_fills_and_shows_the_result(admin_on_jobs, tmp_path):
    page = admin_on_jobs
    generate(tmp_path / "archive", 150_000)  # the live server's VAR_DIR is tmp_path
    expect(page.locator("#rollup .rollup-state")).to_contain_text("No rollup yet")
    page.evaluate(RECORD)
    correlation_id = launched(page, lambda: page.click("#run-rollup"))
    expect(page.locator("#run-status")).to_contain_text(f"Running {correlation_id}")
    card = page.locator(f'#jobs li[data-id="{correlation_id}"]')
    expect(card).to_have_attribute("data-status", "running", timeout=60_000)
    expect(card).to_have_attribute("data-status", "succeeded", timeout=180_000)
    expect(card.locator(".outcome")).to_contain_text("rows written")
    assert card.locator(".progress").get_attribute("aria-valuenow") == "100"
    percents = page.evaluate("window.percents")
    assert percents == sorted(percents) and percents[-1] == 100
    assert any(0 < p < 100 for p in percents), f"no progress seen between 0 and 100: {percents}"
    expect(page.locator("#rollup .rollup-state")).to_contain_text("150,000 notifications")
    expect(page.locator("#rollup svg rect.bar")).to_have_count(5)  # 5 topics: no "other"
    expect(page.locator("#rollup tbody tr")).to_have_count(5)
    expect(page.locator("#run-rollup")).to_be_enabled()
    assert_local_times(page.locator("#rollup"), 3 + 2 * 5)  # made, first, last; 2 a topic
    wait_until(lambda: not job_processes(correlation_id), timeout=60, message="the job to exit")


def test_a_failed_run_shows_its_error_and_a_double_click_starts_one_run(admin_on_jobs):
    page = admin_on_jobs  # no archive at all
    expect(page.locator("#run")).not_to_have_attribute("aria-busy", "true")
    page.evaluate(WATCH_BUTTON)
    posts = []
    page.on("request", lambda r: posts.append(r.method) if r.url.endswith("/api/spark/rollup") else None)
    correlation_id = launched(page, lambda: page.dblclick("#run-rollup"))
    card = page.locator(f'#jobs li[data-id="{correlation_id}"]')
    expect(card).to_have_attribute("data-status", "failed", timeout=180_000)
    expect(card.locator(".outcome")).to_contain_text("ArchiveError: archive not found")
    expect(page.locator("#run-rollup")).to_be_enabled()
    expect(page.locator("#run-status")).to_contain_text(f"Run {correlation_id} failed.")
    assert posts == ["POST"]  # two clicks, one request, one run
    assert page.evaluate("window.buttonStates") == [True, False]  # disabled at once, until the end
    assert page.locator("#jobs li.job").count() == 1
    wait_until(lambda: not job_processes(correlation_id), timeout=60, message="the job to exit")


def test_a_run_that_ended_before_its_start_was_answered_says_how_it_ended(admin_on_jobs, redis):
    """A run that fails at once can say so over the socket before the answer to its
    POST reaches the page: the answer is held here until then."""
    page = admin_on_jobs  # no archive: the run fails at once
    held = []

    def hold(route):
        held.append((route, route.fetch()))  # the run is started; its answer waits

    page.route("**/api/spark/rollup", hold)
    page.click("#run-rollup")
    for _ in range(600):  # the handler runs while Playwright is called: so, in its waits
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the POST never came"
    route, answer = held[0]
    correlation_id = answer.json()["correlation_id"]
    card = page.locator(f'#jobs li[data-id="{correlation_id}"]')
    expect(card).to_have_attribute("data-status", "failed", timeout=180_000)
    route.fulfill(response=answer)
    expect(page.locator("#run-status")).to_contain_text(f"Run {correlation_id} failed.")
    expect(page.locator("#run-rollup")).to_be_enabled()


def test_any_correlation_id_a_publisher_chooses_shows_as_a_job(admin_on_jobs, redis):
    """Ids that are also object keys or CSS syntax: each is a job card of its own."""
    from app.stream.publish import Bus
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
    for i in range(len(strange)):  # the card comes with "started"; "succeeded" may follow later
        expect(cards.nth(i)).to_have_attribute("data-status", "succeeded")


def test_the_button_waits_for_a_run_already_running(live_server, redis, page):
    """A run found running on load (its lock held here: no Spark) disables the button,
    names the run beside it, and its last notification enables it again."""
    redis.set(launcher.LOCK, "spark-rollup-held", ex=300)
    open_as_admin(page, live_server, redis, "Jobs")
    expect(page.locator("#run-rollup")).to_be_disabled()
    expect(page.locator("#run-status")).to_contain_text("Running spark-rollup-held")
    expect(page.locator("#run")).to_have_attribute("data-running", "spark-rollup-held")
    finish(redis, "spark-rollup-held", "succeeded")
    expect(page.locator("#run-rollup")).to_be_enabled()
    expect(page.locator("#run-status")).to_contain_text("Run spark-rollup-held succeeded.")
    expect(page.locator("#run")).not_to_have_attribute("data-running", "spark-rollup-held")


def test_a_refused_run_shows_why_and_waits_for_the_running_one(admin_on_jobs, redis):
    page = admin_on_jobs
    expect(page.locator("#run")).not_to_have_attribute("aria-busy", "true")  # load's checks done
    expect(page.locator("#run-rollup")).to_be_enabled()
    redis.set(launcher.LOCK, "spark-rollup-other", ex=300)  # started elsewhere meanwhile
    with page.expect_response(lambda r: r.url.endswith("/api/spark/rollup")
                              and r.request.method == "POST") as reply:
        page.click("#run-rollup")
    assert reply.value.status == 409
    expect(page.locator("#run-status .run-note")).to_have_text(
        "a rollup is running already (spark-rollup-other); wait for it to end")
    expect(page.locator("#run-status .run-state")).to_have_text("Running spark-rollup-other")
    expect(page.locator("#run-rollup")).to_be_disabled()
    finish(redis, "spark-rollup-other")
    expect(page.locator("#run-rollup")).to_be_enabled()


SUMMARY = {
    "generated_at": "2026-11-20T09:15:00Z", "rows_read": 121_943, "days": [], "volume": [],
    "topics": [{"topic": topic, "total": total, "first_seen": "2026-11-18T00:00:01.000Z",
                "last_seen": "2026-11-20T20:59:59.000Z"}
               for topic, total in [("ops.deploy", 31_234), ("ops.db.slow", 30_112),
                                    ("spark.job.done", 29_877), ("billing.invoice", 12_000),
                                    ("demo.signup", 9_000), ("ops.disk", 4_000), ("ops.cpu", 2_500),
                                    ("ops.net", 1_800), ("x.a", 900), ("x.b", 400), ("x.c", 120)]],
}


def test_the_rollup_at_a_glance_in_local_time(live_server, redis, page, tmp_path):
    """Eight busiest topics and one "other" bar, axes named, values written; every
    time in the browser's zone; one h1; usable at 360 px wide, by WCAG 2.1 AA."""
    (tmp_path / "rollup").mkdir()  # the live server's VAR_DIR is tmp_path
    (tmp_path / "rollup" / "summary.json").write_text(json.dumps(SUMMARY))
    page.set_viewport_size({"width": 360, "height": 740})
    open_as_admin(page, live_server, redis, "Jobs")
    rollup = page.locator("#rollup")
    expect(rollup.locator(".rollup-state")).to_contain_text("from 121,943 notifications")
    bars = rollup.locator("svg rect.bar")
    expect(bars).to_have_count(9)
    assert bars.nth(0).get_attribute("data-topic") == "ops.deploy"
    assert bars.nth(8).get_attribute("data-topic") == "other (3 topics)"
    assert rollup.locator("svg text.axis-title").all_text_contents() == ["Topic", "Notifications"]
    values = rollup.locator("svg text.value").all_text_contents()
    assert values[0] == "31,234" and values[-1] == "1,420"  # the busiest; the other three together
    made = rollup.locator(".rollup-state time").first
    assert made.get_attribute("datetime") == "2026-11-20T09:15:00.000Z"
    assert local("2026-11-20T09:15:00Z") == "Nov 20, 2026, 3:00 PM"  # UTC+05:45
    assert made.inner_text().replace("\u202f", " ") == "Nov 20, 2026, 3:00 PM"
    assert_local_times(rollup, 3 + 2 * 11)
    assert "2026-11-20T09:15" not in rollup.inner_text()  # never the raw UTC string
    assert page.locator("h1").all_inner_texts() == ["Jobs"]
    assert page.locator("h2").all_inner_texts() == ["Spark jobs", "Latest rollup"]
    assert no_horizontal_scroll(page)
    assert accessibility_violations(page) == []


def test_a_failure_published_by_hand_says_what_it_knows(admin_on_jobs, live_server, api_key):
    """Runs whose notifications lack the fields a Spark job sends: no made-up name,
    no 0 % that nothing reported, no colon before a missing error; the title and
    body say what happened when no error does. One without a run id is a run of its own."""
    page = admin_on_jobs
    live_server.publish(api_key, topic="spark.job.failed", title="job failed",
                        correlation_id="by-hand-bare")
    live_server.publish(api_key, topic="spark.job.failed", title="nightly export failed",
                        body="the disk is full", correlation_id="by-hand-titled",
                        data={"job": "export"})
    live_server.publish(api_key, topic="spark.job.failed", title="export failed",
                        correlation_id="by-hand-message", data={"error_message": "disk full"})
    live_server.publish(api_key, topic="spark.job.succeeded", title="export done",
                        correlation_id="by-hand-done")
    live_server.publish(api_key, topic="spark.job.failed", title="the export broke")
    cards = page.locator("#jobs li.job")
    expect(cards).to_have_count(5)

    bare = page.locator('#jobs li[data-id="by-hand-bare"]')
    expect(bare.locator(".job-name")).to_have_text("A run")
    expect(bare.locator(".job-status")).to_have_text("failed")
    expect(bare.locator(".outcome")).to_have_text("job failed")
    expect(bare.locator(".progress")).to_have_count(0)  # no progress was ever reported
    expect(bare.locator(".progress-text")).to_have_count(0)

    titled = page.locator('#jobs li[data-id="by-hand-titled"]')
    expect(titled.locator(".job-name")).to_have_text("export")
    expect(titled.locator(".outcome")).to_have_text("nightly export failed: the disk is full")

    message = page.locator('#jobs li[data-id="by-hand-message"]')
    expect(message.locator(".outcome")).to_have_text("disk full")

    done = page.locator('#jobs li[data-id="by-hand-done"]')
    expect(done.locator(".job-status")).to_have_text("succeeded")
    expect(done.locator(".outcome")).to_have_text("export done")  # no "in 0.0 s"

    alone = cards.filter(has_text="the export broke")
    expect(alone).to_have_count(1)
    expect(alone).to_have_attribute("data-status", "failed")
    expect(alone.locator(".job-id")).to_have_count(0)
    for i in range(5):
        text = cards.nth(i).inner_text()
        assert not re.search(r"(?<!\d)0 ?%", text), text  # no 0 % that nothing reported
        assert ":\n" not in text and not text.rstrip().endswith(":"), text
    assert accessibility_violations(page) == []


def test_no_rollup_yet_is_said_without_a_failed_request(live_server, redis, page):
    """Before the first rollup the page says so, and nothing it asked failed: no 4xx
    in the network log, no error in the console."""
    failed, errors = [], []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("requestfailed", lambda r: failed.append(f"{r.failure} {r.url}"))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    open_as_admin(page, live_server, redis, "Jobs")
    state = page.locator("#rollup .rollup-state")
    expect(state).to_contain_text("No rollup yet")
    expect(page.locator("#run")).not_to_have_attribute("aria-busy", "true")
    assert failed == [] and errors == []
    expect(state).to_have_text("No rollup yet: none has run. “Run rollup now” makes one.")


# Eight topics by name and 24 "other" ones that together dwarf them.
CROWDED = dict(SUMMARY, topics=[
    {"topic": f"named.t{i}", "total": 1_000 - 90 * i, "first_seen": "2026-11-18T00:00:01.000Z",
     "last_seen": "2026-11-20T20:59:59.000Z"} for i in range(8)] + [
    {"topic": f"rest.r{i}", "total": 300, "first_seen": "2026-11-18T00:00:01.000Z",
     "last_seen": "2026-11-20T20:59:59.000Z"} for i in range(24)])


def test_the_other_bar_never_dwarfs_the_named_ones(live_server, redis, page, tmp_path):
    """Before: "other (24 topics)" (7,200) set the scale, the busiest named topic (1,000)
    got a twelfth of it. Now the named bars set it; "other" is drawn cut, its value in full."""
    (tmp_path / "rollup").mkdir()
    (tmp_path / "rollup" / "summary.json").write_text(json.dumps(CROWDED))
    open_as_admin(page, live_server, redis, "Jobs")
    bars = page.locator("#rollup svg rect.bar")
    expect(bars).to_have_count(9)
    widths = bars.evaluate_all("l => l.map(b => b.getBoundingClientRect().width)")
    assert widths[0] >= 0.9 * max(widths), f"the busiest named bar is {widths[0]} of {max(widths)} px"
    assert widths[7] >= 0.3 * max(widths), widths  # the eighth (370) readable too
    other = page.locator('#rollup svg rect.bar[data-topic="other (24 topics)"]')
    expect(other).to_have_class("bar other cut")
    values = page.locator("#rollup svg text.value").all_text_contents()
    assert values[-1] == "7,200"
    assert page.locator("#rollup svg line.break").count() == 2
    assert accessibility_violations(page) == []


def test_a_spark_error_shows_its_telling_line_not_a_stack_trace(admin_on_jobs, redis_server, spark,  # noqa: F811
                                                                monkeypatch, tmp_path):
    """Before: a Py4JJavaError's card said "Py4JJavaError: An error occurred while calling
    z:org.apache...collectAndServe. : ..." and 2,000 characters of Java stack trace."""
    page = admin_on_jobs
    monkeypatch.setenv("REDIS_URL", redis_server.url)  # where the job's driver publishes
    missing = tmp_path / "no-such-input"
    with pytest.raises(Exception, match="Input path does not exist"):
        with SparkJobNotifier("reads", spark, user="root", correlation_id="run-java", interval=0.05):
            spark.sparkContext.textFile(str(missing)).count()
    card = page.locator('#jobs li[data-id="run-java"]')
    expect(card).to_have_attribute("data-status", "failed", timeout=20_000)
    outcome = card.locator(".outcome").inner_text()
    assert "Exception: Input path does not exist: file:" in outcome, outcome  # the root cause's line
    assert str(missing) in outcome
    assert "An error occurred while calling" not in outcome and "\tat " not in outcome, outcome
    assert len(outcome) <= 520, f"{len(outcome)} characters: {outcome[:200]}…"
