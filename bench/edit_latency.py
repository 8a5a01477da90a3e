"""Edit-to-other-user latency: one user edits a card in the example board, another sees it.

Runs Herald (a redis-server and ``python wsgi.py``) and the example host app
(examples/board) on two origins, and signs two headless Chromium contexts in
to the board as alice and bob. Alice renames one card N times (default 100),
one edit every ``--gap`` ms, through the board's own Backbone model
(``model.save``: a PATCH to the host app, which commits the card and its
outbox row; the outbox relay, woken by the commit, publishes it to Herald
over HTTP; before issue 26 the view published right after its commit).
The clock starts in alice's page just before the save and stops when
a MutationObserver in bob's page sees the new title in the DOM: host app,
the outbox relay, Herald's REST publish, Redis, the relay, Socket.IO, the
browser client and Herald.sync, end to end. Both pages share this machine's
wall clock.

    .venv/bin/python bench/edit_latency.py [--count 100] [--gap 50]
"""
import argparse
import contextlib
import tempfile
import time
from pathlib import Path

from common import save, summary  # first: it puts the project on sys.path
from playwright.sync_api import sync_playwright  # noqa: E402

from app.users import accounts  # noqa: E402
from tests.integration.e2e.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.support import EXAMPLE_JWT_SECRET, ExampleApp, LiveServer, RedisServer, free_port, wait_until  # noqa: E402

# In bob's page: Date.now() at which each title first appears on the board.
OBSERVER = """() => {
  window.shownAt = {};
  new MutationObserver(function () {
    var now = Date.now();
    document.querySelectorAll('.card-item .title').forEach(function (node) {
      var title = node.textContent;
      if (!(title in window.shownAt)) window.shownAt[title] = now;
    });
  }).observe(document.querySelector('.columns'), {childList: true, subtree: true,
                                                  characterData: true});
}"""

# In alice's page: rename the card, returning Date.now() just before the save.
EDIT = """([id, title]) => {
  var started = Date.now();
  board.cards.get(id).save({title: title}, {patch: true, wait: true});
  return started;
}"""


@contextlib.contextmanager
def herald_and_board():
    folder = Path(tempfile.mkdtemp(prefix="herald-bench-"))
    redis_server = RedisServer(folder)
    redis_server.start()
    client = redis_server.client()
    example_port = free_port()
    herald = LiveServer(redis_server.url, folder, JWT_SECRET=EXAMPLE_JWT_SECRET,
                        SOCKETIO_ORIGINS=f"http://127.0.0.1:{example_port}")
    herald.start()
    example = ExampleApp(herald.url, accounts.create_api_key(client, "board"), folder, example_port)
    example.start()
    try:
        yield example
    finally:
        example.stop()
        herald.stop()
        client.close()
        redis_server.stop()


def signed_in(browser, example, user):
    page = browser.new_context().new_page()
    page.goto(example.url + "/login")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", "board-demo")
    page.click("button[type=submit]")
    page.wait_for_selector("#live[data-state=connected]")
    return page


def measure(count, gap_ms):
    with herald_and_board() as example, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            alice, bob = signed_in(browser, example, "alice"), signed_in(browser, example, "bob")
            alice.fill("#new-title", "edit -1")
            alice.click("#new-card button[type=submit]")
            bob.wait_for_selector(".card-item")
            card_id = int(alice.get_attribute(".card-item", "data-id"))
            bob.evaluate(OBSERVER)
            started = {}
            for i in range(count):
                title = f"edit {i}"
                started[title] = alice.evaluate(EDIT, [card_id, title])
                time.sleep(gap_ms / 1000)
            shown = wait_until(lambda: _all_shown(bob, started), timeout=60, message="all edits")
        finally:
            browser.close()
    return {"count": count, "gap_ms": gap_ms,
            "latency_ms": summary([shown[t] - s for t, s in started.items()])}


def _all_shown(page, started):
    shown = page.evaluate("window.shownAt")
    return shown if all(t in shown for t in started) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--gap", type=float, default=50, help="ms between edits")
    args = parser.parse_args()
    result = measure(args.count, args.gap)
    lat = result["latency_ms"]
    print(f"edit-to-other-user latency over {args.count} edits (example board, two browsers):")
    print(f"  median {lat['median']:.1f} ms   p99 {lat['p99']:.1f} ms   max {lat['max']:.1f} ms")
    print(f"written to {save('edit_latency', result)}")


if __name__ == "__main__":
    main()
