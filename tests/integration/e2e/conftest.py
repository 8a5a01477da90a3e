"""Headless Debian Chromium, driven by Playwright for Python.

The browser is /usr/bin/chromium (installed by ``make test``); Playwright
never downloads one. The flags keep Chromium from reaching for the network.

Every browser test also checks Herald's Content-Security-Policy: a
violation reported by any page it opened (an inline script or style, an
``eval``) fails the test at teardown.
"""
import pytest
from playwright.sync_api import sync_playwright

from tests.support import ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


CSP_REPORTER = """
document.addEventListener('securitypolicyviolation', function (e) {
  window.reportCspViolation(e.violatedDirective + ' blocked ' + e.blockedURI + ' at ' +
                            e.sourceFile + ':' + e.lineNumber);
});
"""


@pytest.fixture
def context(browser):
    context = browser.new_context()
    violations = []
    context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    context.add_init_script(CSP_REPORTER)
    yield context
    context.close()
    assert violations == [], f"Content-Security-Policy violations: {violations}"


@pytest.fixture
def page(context):
    page = context.new_page()
    page.set_default_timeout(10_000)
    return page


@pytest.fixture
def contexts(browser):
    """New browser contexts on demand, each failing the test on a CSP violation."""
    made = []

    def new(**options):
        context = browser.new_context(**options)
        context.violations = []
        context.expose_binding("reportCspViolation",
                               lambda _source, text: context.violations.append(text))
        context.add_init_script(CSP_REPORTER)
        made.append(context)
        return context
    yield new
    for context in made:
        context.close()
    assert [v for c in made for v in c.violations] == []


def sign_in(page, server, name, password):
    """Sign in through the login form and wait for the live connection."""
    page.goto(server.url + "/login")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_selector("#connection[data-state=connected]")


def subscribe(page, topic):
    """Subscribe through the panel and wait for the server's ack to show it."""
    page.fill("#subscriptions input[name=topic]", topic)
    page.click("#subscriptions button[type=submit]")
    page.wait_for_selector(f'#subscriptions li[data-topic="{topic}"]')


def dashboard_of_ann(page, server, redis, *topics):
    """A user ``ann`` created, subscribed to ``topics`` and signed in on the dashboard,
    its feed loaded. Subscribed before the page opens: a subscription made on the page
    reloads the feed, which a test's first notification could race."""
    from app.users import accounts, subscriptions
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", list(topics), limit=10)
    sign_in(page, server, "ann", "ann-password")
    page.wait_for_function("() => herald.notifications.loaded === true")
    return page


def open_as_admin(page, server, redis, link):
    """Create an admin, sign in, follow the navigation ``link`` and wait for the socket."""
    from app.users import accounts
    accounts.create_user(redis, "root", "root-password", admin=True)
    sign_in(page, server, "root", "root-password")
    if not page.locator(f"nav a:has-text('{link}')").is_visible():
        page.click(".nav-menu summary")  # a phone: the pages are in the header's menu
    page.click(f"nav a:has-text('{link}')")
    page.wait_for_selector("#connection[data-state=connected]")
    return page


AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def accessibility_violations(page, impacts=None):
    """What axe-core (from node_modules) finds against WCAG 2.1 A and AA on ``page``
    (only those of the given ``impacts``, e.g. ("serious", "critical"), when given).

    axe is evaluated through the DevTools protocol, which the page's
    Content-Security-Policy does not govern, so the page keeps its own.
    """
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text())
    found = page.evaluate("(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}})"
                          ".then(r => r.violations.map(v => ({id: v.id, impact: v.impact, "
                          "help: v.help, nodes: v.nodes.map(n => n.target.join(' '))})))", WCAG)
    return [v for v in found if impacts is None or v["impact"] in impacts]


def no_horizontal_scroll(page):
    """True when the page is no wider than its viewport."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def horizontal_overflow(page):
    """How many CSS pixels the page is wider than its viewport (0: no horizontal scroll)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
