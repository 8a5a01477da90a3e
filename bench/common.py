"""What the benchmarks share: a real Redis + web server, a signed-in Chromium page,
and a feed observer that timestamps each item as it enters the DOM."""
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from app.users import accounts, subscriptions  # noqa: E402
from tests.integration.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, sign_in  # noqa: E402
from tests.support import LiveServer, RedisServer  # noqa: E402

RESULTS = ROOT / "bench" / "results"

# Records Date.now() for each feed item as it is first inserted, by notification id.
OBSERVER = """() => {
  window.seenAt = {};
  new MutationObserver(function (mutations) {
    var now = Date.now();
    mutations.forEach(function (m) {
      m.addedNodes.forEach(function (node) {
        var id = node.getAttribute && node.getAttribute('data-id');
        if (id && !(id in window.seenAt)) window.seenAt[id] = now;  // first shown (a redraw re-adds)
      });
    });
  }).observe(document.getElementById('feed'), {childList: true});
}"""


@contextlib.contextmanager
def stack(topics=("bench",), admin=False, **server_env):
    """A redis-server, a user `bench` subscribed to ``topics``, an API key and a web server."""
    folder = Path(tempfile.mkdtemp(prefix="herald-bench-"))
    redis_server = RedisServer(folder)
    redis_server.start()
    client = redis_server.client()
    accounts.create_user(client, "bench", "bench-password", admin=admin)
    subscriptions.add(client, "bench", list(topics), limit=10)
    key = accounts.create_api_key(client, "bench")
    server = LiveServer(redis_server.url, folder, **server_env)
    server.start()
    try:
        yield redis_server, client, server, key
    finally:
        server.stop()
        client.close()
        redis_server.stop()


@contextlib.contextmanager
def browser_page(server):
    """Headless Chromium signed in as `bench`, with the feed observer installed."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        sign_in(page, server, "bench", "bench-password")
        page.evaluate(OBSERVER)
        try:
            yield page
        finally:
            browser.close()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def summary(values):
    return {"median": statistics.median(values), "p99": percentile(values, 0.99),
            "max": max(values), "count": len(values)}


def save(name, result):
    """Write ``result`` to bench/results/<name>.json with the time of measurement."""
    result["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    return path.relative_to(ROOT)
