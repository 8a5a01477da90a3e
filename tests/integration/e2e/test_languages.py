"""English and German pages (issue 25), in Chromium: a German browser (Accept-Language
de, locale de-DE) gets every page, the scripts' text, dates and relative times in
German, with no English UI word left; the language switch in the footer changes it;
an English browser keeps English; axe passes in German."""
import re

import pytest
import requests
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import (
    CSP_REPORTER,
    DESKTOP,
    PHONE,
    accessibility_violations,
    horizontal_overflow,
    sign_in,
)

WAIT = 5_000
SHOTS = "/tmp/helper-i18n"
# English words of Herald's own interface that a German page must not show.
ENGLISH = ["Archive", "Mark all read", "Mark read", "Mark unread", "Snooze", "Subscriptions",
           "Subscribe", "ago", "Inbox", "For you", "Activity", "Select all", "Shortcuts",
           "Loading", "Sign out", "Preferences", "Undo", "Dismiss", "Close", "Severity", "Topic",
           "Time", "Notifications", "Keyboard shortcuts", "connected", "Search and filters",
           "Comfortable", "Language", "rows written", "Email", "Save", "Theme", "just now",
           "warning", "Digests", "Operations", "running", "started", "Progress", "Latest rollup",
           "No rollup yet", "Browser notifications", "Time zone", "Quiet hours", "Add a topic"]
GERMAN_MONTHS = ("Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.",
                 "Nov.", "Dez.")


def english_words(text):
    """The English UI words found in ``text`` (whole words, case as written)."""
    return [word for word in ENGLISH if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text)]


@pytest.fixture
def german(browser):
    """A Chromium context speaking German (Accept-Language de-DE), CSP watched."""
    context = browser.new_context(locale="de-DE")
    violations = []
    context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    context.add_init_script(CSP_REPORTER)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()
    assert violations == [], f"Content-Security-Policy violations: {violations}"


@pytest.fixture
def ann(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["ops"], limit=10)
    return Bus(redis)


def shown_text(page, selector="body"):
    """What a person sees under ``selector``, and the names given to controls there."""
    return page.evaluate("""(selector) => {
      const root = document.querySelector(selector);
      const names = [...root.querySelectorAll('[aria-label], [title], [placeholder]')]
        .filter(e => e.offsetParent !== null)
        .map(e => [e.getAttribute('aria-label'), e.getAttribute('placeholder')].join(' '));
      return root.innerText + '\\n' + names.join('\\n');
    }""", selector)


def test_a_german_browser_gets_the_dashboard_in_german(live_server, ann, german):
    page = german
    page.set_viewport_size(DESKTOP)
    page.goto(live_server.url + "/login")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.locator("h1")).to_have_text("Anmelden")
    sign_in(page, live_server, "ann", "ann-password")
    first = ann.publish("ops.deploy", "Bereitstellung fertig", severity="info")
    ann.publish("ops.disk", "Platte fast voll", severity="warning", user="ann")
    expect(page.locator("#feed li.notification")).to_have_count(2, timeout=WAIT)
    expect(page.locator("#connection")).to_have_text("verbunden")
    expect(page.locator("#tab-inbox")).to_contain_text("Posteingang")
    expect(page.locator("#tab-foryou")).to_contain_text("Für Sie")
    expect(page.locator(".mark-all-read")).to_have_text("Alle als gelesen markieren")
    expect(page.locator(".toast .severity")).to_contain_text("Warnung")
    time = page.locator(f'#feed li.notification[data-id="{first}"] time')
    expect(time).to_have_text(re.compile(r"^(gerade eben|vor \d+)"))
    assert any(month in time.get_attribute("title") for month in GERMAN_MONTHS)
    page.screenshot(path=f"{SHOTS}/dashboard-de-desktop.png")
    assert english_words(shown_text(page)) == []
    assert english_words(page.locator("#feed").text_content()) == []

    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    expect(page.locator("#shortcuts-title")).to_have_text("Tastenkürzel")
    assert english_words(shown_text(page, "#shortcuts")) == []
    page.keyboard.press("Escape")

    page.click(f'#feed li.notification[data-id="{first}"] button.open')
    detail = page.locator("#detail")
    expect(detail).to_contain_text("Schweregrad")
    expect(detail.locator(".relative")).to_have_text(re.compile(r"^(gerade eben|vor \d+)"))
    assert any(month in detail.locator("dd time").first.inner_text() for month in GERMAN_MONTHS)
    assert english_words(shown_text(page, "#detail")) == []
    page.click("#detail .close-detail")

    page.click(".mark-all-read")
    # The other one was read when opened: one left to mark (and the singular said so).
    expect(page.locator("#undo")).to_contain_text("Als gelesen markiert: 1 Benachrichtigung")
    expect(page.locator("#undo .undo")).to_have_text("Rückgängig")
    assert accessibility_violations(page) == []
    page.set_viewport_size(PHONE)
    page.screenshot(path=f"{SHOTS}/dashboard-de-phone.png", full_page=True)
    assert horizontal_overflow(page) == 0


def test_the_switch_changes_the_language_and_it_is_kept(live_server, ann, german):
    page = german
    sign_in(page, live_server, "ann", "ann-password")
    expect(page.locator("#tab-inbox")).to_contain_text("Posteingang")
    page.select_option(".language-switch select", "en")
    page.click(".language-switch button")
    page.wait_for_selector("#connection[data-state=connected]")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("#tab-inbox")).to_contain_text("Inbox")
    expect(page.locator(".mark-all-read")).to_have_text("Mark all read")
    page.goto(live_server.url + "/preferences")  # the choice is kept over the browser's
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.select_option(".language-switch select", "de")
    page.click(".language-switch button")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    assert page.url.endswith("/preferences")


def test_an_english_browser_keeps_english(live_server, ann, page):
    sign_in(page, live_server, "ann", "ann-password")
    ann.publish("ops.deploy", "Deployed", severity="info")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("#feed li.notification time")).to_have_text(re.compile(r"just now|ago"),
                                                                     timeout=WAIT)
    expect(page.locator("#tab-inbox")).to_contain_text("Inbox")
    assert "Posteingang" not in page.locator("body").inner_text()


def test_the_switch_goes_back_to_this_site_only(live_server):
    answer = requests.get(live_server.url + "/language",
                          params={"lang": "de", "next": "//evil.example/"}, allow_redirects=False)
    assert answer.status_code == 302 and answer.headers["Location"] in ("/", live_server.url + "/")
    assert "herald_lang=de" in answer.headers["Set-Cookie"]
    page_in_german = requests.get(live_server.url + "/login", cookies={"herald_lang": "de"},
                                  headers={"Accept-Language": "en"})
    assert '<html lang="de">' in page_in_german.text and "Anmelden" in page_in_german.text


def test_the_error_pages_speak_german(live_server):
    answer = requests.get(live_server.url + "/no-such-page", headers={"Accept-Language": "de-DE,de;q=0.9"})
    assert answer.status_code == 404
    assert "Hier ist nichts" in answer.text and "Zurück zu Ihren Mitteilungen" in answer.text
    english = requests.get(live_server.url + "/no-such-page")
    assert "There is nothing here" in english.text and '<html lang="en">' in english.text



def test_preferences_and_jobs_speak_german(live_server, redis, german):
    page = german
    accounts.create_user(redis, "root", "root-password", admin=True)
    sign_in(page, live_server, "root", "root-password")
    for size, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page.set_viewport_size(size)
        page.goto(live_server.url + "/preferences")
        expect(page.locator("#preferences h2")).to_have_text("Nach Thema")
        page.click(".add-rule")
        expect(page.locator("#rules .rule-mode").first).to_contain_text("E-Mail-Zusammenfassung, täglich")
        expect(page.locator("#browser-notifications .switch-status")).not_to_be_empty()
        page.screenshot(path=f"{SHOTS}/preferences-de-{name}.png", full_page=True)
        assert english_words(shown_text(page)) == []
        assert accessibility_violations(page) == []
        assert horizontal_overflow(page) == 0

        page.goto(live_server.url + "/jobs")
        if name == "desktop":  # the first visit subscribes root to spark.job
            expect(page.locator("#subscribed-note")).to_be_visible()
        page.wait_for_selector("#connection[data-state=connected]")
        expect(page.locator("#rollup .rollup-state")).to_contain_text("Noch keine Auswertung")
        run = f"run-{name}"
        Bus(redis).publish("spark.job.started", "started", correlation_id=run, user="root",
                           data={"job": "rollup"})
        Bus(redis).publish("spark.job.progress", "progress", correlation_id=run, user="root",
                           data={"job": "rollup", "percent": 40, "tasks_completed": 2,
                                 "tasks_total": 5})
        job = page.locator(f'#jobs li.job[data-id="{run}"]')
        expect(job.locator(".job-status")).to_have_text("läuft")
        expect(job).to_contain_text("gestartet")
        started = job.locator("time")  # "27.11.2026, 03:00", titled "Freitag, 27. November 2026 um …"
        assert re.fullmatch(r"\d{1,2}\.\d{1,2}\.\d{4}, \d{2}:\d{2}", started.inner_text())
        assert re.search(r"\d{1,2}\. (Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|"
                         r"November|Dezember) \d{4} um ", started.get_attribute("title"))
        page.screenshot(path=f"{SHOTS}/jobs-de-{name}.png", full_page=True)
        assert english_words(shown_text(page)) == []
        assert accessibility_violations(page) == []
        assert horizontal_overflow(page) == 0
