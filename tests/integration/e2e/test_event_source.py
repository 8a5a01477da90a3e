"""A browser's own EventSource follows GET /api/stream with a stream token, and
resumes by itself (Last-Event-ID) after the server restarts, missing nothing."""
from playwright.sync_api import expect  # noqa: F401  (the page's assertions below)

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import sign_in

OPEN = """async () => {
  const config = herald.pageConfig();
  const reply = await fetch('/api/stream-token', {method: 'POST', credentials: 'same-origin',
                                                  headers: {'X-CSRFToken': config.csrfToken}});
  const {token} = await reply.json();
  window.sse = {got: [], replayed: [], opened: 0};
  const source = new EventSource('/api/stream?token=' + encodeURIComponent(token));
  source.onopen = () => { window.sse.opened += 1; };
  source.onmessage = (e) => window.sse.got.push([e.lastEventId, JSON.parse(e.data).title]);
  source.addEventListener('replayed', (e) => window.sse.replayed.push(JSON.parse(e.data)));
  window.sseSource = source;
}"""


def test_event_source_receives_and_resumes_after_a_restart(live_server, redis, page):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["news"], limit=10)
    bus = Bus(redis)
    sign_in(page, live_server, "ann", "ann-password")
    page.evaluate(OPEN)
    page.wait_for_function("() => window.sse.replayed.length === 1")
    first = [bus.publish("news.a", f"first {i}") for i in range(2)]
    page.wait_for_function("() => window.sse.got.length === 2")
    live_server.stop()
    missed = [bus.publish("news.a", f"missed {i}") for i in range(2)]
    live_server.start()
    page.wait_for_function("() => window.sse.replayed.length === 2", timeout=30_000)
    after = bus.publish("news.a", "after")
    page.wait_for_function("() => window.sse.got.length >= 5")
    got = page.evaluate("window.sse.got")
    assert got == [[i, t] for i, t in zip(first + missed + [after],
                                          ["first 0", "first 1", "missed 0", "missed 1", "after"],
                                          strict=True)]
    assert page.evaluate("window.sse.replayed[1].recovered") is True
    page.evaluate("window.sseSource.close()")
