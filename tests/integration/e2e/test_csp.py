"""The browser enforces Herald's Content-Security-Policy, and the reporter every
browser test relies on (conftest.py) sees a violation when there is one."""
from tests.integration.e2e.conftest import CSP_REPORTER


def test_inline_script_is_blocked_and_reported(browser, live_server):
    context = browser.new_context()
    violations = []
    context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    context.add_init_script(CSP_REPORTER)
    try:
        page = context.new_page()
        page.goto(live_server.url + "/login")
        page.evaluate("""() => {
            const script = document.createElement('script');
            script.textContent = 'window.injected = true';
            document.body.appendChild(script);
            const styled = document.createElement('div');
            styled.innerHTML = '<b style="color: red">x</b>';
            document.body.appendChild(styled);
        }""")
        assert page.evaluate("window.injected") is None
        # (eval cannot be tried from here: Playwright's evaluate is not subject to the
        # page's policy. The policy has no 'unsafe-eval': tests/unit/web/test_headers.py.)
        page.wait_for_function("() => true")  # let the violation events be delivered
        assert any(v.startswith("script-src") for v in violations), violations
        assert any(v.startswith("style-src") for v in violations), violations
    finally:
        context.close()
