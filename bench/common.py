"""What the benchmarks share: a real Redis + web server, a signed-in Chromium page,
and a feed observer that timestamps each item as it enters the DOM."""
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from app.users import accounts, subscriptions  # noqa: E402
from tests.integration.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, sign_in  # noqa: E402
from tests.support import LiveServer, RedisServer, cpu_seconds, free_port  # noqa: E402

RESULTS = ROOT / "bench" / "results"

# The page's wall clock in ms to a fraction (Date.now() has whole milliseconds: a page's
# share of about a millisecond was read as 1 or 2). Both observers below use it.
PAGE_CLOCK = "performance.timeOrigin + performance.now()"

# Records the time each feed item is first inserted, by notification id.
OBSERVER = """() => {
  window.seenAt = {};
  new MutationObserver(function (mutations) {
    var now = __NOW__;
    mutations.forEach(function (m) {
      m.addedNodes.forEach(function (node) {
        var id = node.getAttribute && node.getAttribute('data-id');
        if (id && !(id in window.seenAt)) window.seenAt[id] = now;  // first shown (a redraw re-adds)
      });
    });
  }).observe(document.getElementById('feed'), {childList: true});
}""".replace("__NOW__", PAGE_CLOCK)

# Installed before the page's own scripts: records the time each notification id
# first arrives on any WebSocket of the page, before the page's code has seen the frame.
# The listener is the socket's first, so OBSERVER's time less this one is the page's
# share (decode, dispatch, draw) and this one less the publish is the server's and the
# wire's (bench/browser_latency.py).
ARRIVALS = """(() => {
  window.arrivedAt = {};
  var Native = window.WebSocket, ids = /"id": ?"(\\d+-\\d+)"/g;
  function Recorded(url, protocols) {
    var socket = protocols === undefined ? new Native(url) : new Native(url, protocols);
    socket.addEventListener('message', function (event) {
      var now = __NOW__, match;
      if (typeof event.data !== 'string') return;
      ids.lastIndex = 0;
      while ((match = ids.exec(event.data))) {
        if (!(match[1] in window.arrivedAt)) window.arrivedAt[match[1]] = now;
      }
    });
    return socket;
  }
  Recorded.prototype = Native.prototype;
  ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED'].forEach(function (name) { Recorded[name] = Native[name]; });
  window.WebSocket = Recorded;
})();""".replace("__NOW__", PAGE_CLOCK)


def browser_cpu_ms():
    """CPU time (ms, user + system) used so far by every Chromium process on this
    machine, by kind (``renderer``, ``gpu-process``, ``utility``: the network service,
    ``browser``: the main process) and ``total``. A bench runs alone, so these are its
    browser's: the share of the machine a page's work takes, which on this 2-core
    machine it takes from the server under test too."""
    used = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # a child rewrites its command line as one string: split on spaces too
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").split()
            if not argv or not argv[0].endswith(b"chromium"):
                continue
            kind = next((a[7:].decode() for a in argv if a.startswith(b"--type=")), "browser")
            used[kind] = used.get(kind, 0) + cpu_seconds([int(entry.name)]) * 1000
        except (OSError, ValueError):  # it ended meanwhile
            continue
    used["total"] = sum(used.values())
    return used


def browser_cpu_since(before, count):
    """Each kind's CPU (ms) per notification since ``before`` (browser_cpu_ms), over ``count``."""
    now = browser_cpu_ms()
    return {kind: round((now[kind] - before.get(kind, 0)) / count, 2) for kind in now}


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
    """Headless Chromium signed in as `bench`, with the feed observer and the
    arrivals recorder installed."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.add_init_script(ARRIVALS)
        sign_in(page, server, "bench", "bench-password")
        page.evaluate(OBSERVER)
        try:
            yield page
        finally:
            browser.close()


@contextlib.contextmanager
def minimal_relay(redis_url):
    """bench/peers/minimal_relay.py on a free port (the floor of a relay and of a
    handshake): yields (its base URL, its process)."""
    with peer("minimal_relay.py", REDIS_URL=redis_url) as started:
        yield started


@contextlib.contextmanager
def plain_socketio(page, replayed, redis_url=None):
    """bench/peers/plain_socketio.py on a free port (python-socketio's own cost of a
    reconnect that sends ``page`` and ``replayed``; with ``redis_url``, after one
    Redis round trip): yields (its base URL, its process)."""
    env = {"REDIS_URL": redis_url} if redis_url else {}
    with peer("plain_socketio.py", PAGE=json.dumps(page), REPLAYED=json.dumps(replayed),
              **env) as started:
        yield started


@contextlib.contextmanager
def peer(script, **env):
    """bench/peers/``script`` on a free port, with ``env``, once it prints ``listening``:
    yields (its base URL, its process); stops it after."""
    port = free_port()
    log = tempfile.TemporaryFile()
    process = subprocess.Popen([sys.executable, str(ROOT / "bench/peers" / script)],
                               env=dict(os.environ, PORT=str(port), **env),
                               stdout=subprocess.PIPE, stderr=log)
    try:
        line = process.stdout.readline().decode().strip()
        if line != "listening":
            log.seek(0)
            raise SystemExit(f"{script} did not start: {line!r} {log.read()[-2000:]!r}")
        yield f"http://127.0.0.1:{port}", process
    finally:
        process.terminate()
        process.wait(15)
        process.stdout.close()
        log.close()


@contextlib.contextmanager
def plain_page(url, ready="window.relayReady === true"):
    """Headless Chromium on ``url`` (no sign-in), once ``ready`` holds, with the feed
    observer installed: the same harness as browser_page for a page that is not Herald's."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.add_init_script(ARRIVALS)
        try:
            page.goto(url)
            page.wait_for_function(ready, timeout=15000)
            page.evaluate(OBSERVER)
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
