"""Delivery that loses nothing, under faults, seen by a python-socketio client and a browser.

In each case every notification that was accepted reaches both exactly
once, in id order: the browser's record is every `notification` its
dispatcher saw, before the feed's own de-duplication.
"""
import contextlib
import time

import pytest

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.e2e.conftest import sign_in
from tests.support import Listener, SteadyPublisher, own_stack, rest_publisher, wait_until

WATCH = """() => {
  window.heraldSeen = [];
  herald.dispatcher.on('notification', function (n) { window.heraldSeen.push(n.id); });
}"""


def browser_seen(page):
    return page.evaluate("window.heraldSeen")


@pytest.fixture
def stack(tmp_path):
    """A redis-server of its own (it gets killed) and a web server on it."""
    with own_stack(tmp_path) as (redis_server, client, server):
        accounts.create_user(client, "ann", "ann-password")
        subscriptions.add(client, "ann", ["steady"], limit=10)
        key = accounts.create_api_key(client, "steady")
        yield redis_server, client, server, key


def watchers(server, page):
    listener = Listener(server, server.token("ann", "ann-password"), resume=True)
    sign_in(page, server, "ann", "ann-password")
    page.evaluate(WATCH)
    return listener


@contextlib.contextmanager
def publishing(publisher, first):
    """Run ``publisher`` around the block, which starts once ``first`` were accepted."""
    publisher.start()
    try:
        wait_until(lambda: len(publisher.accepted) >= first, message="publishing")
        yield publisher
    finally:
        publisher.stop()


def assert_all_once_in_order(accepted, listener, page, client):
    """Both got every accepted notification once, in order: a marker for ann is
    published after them, and once both have it, nothing else is coming."""
    wait_until(lambda: len(listener.ids()) >= len(accepted), timeout=30, message="client")
    wait_until(lambda: len(browser_seen(page)) >= len(accepted), timeout=30, message="browser")
    marker = Bus(client).publish("test.marker", "marker", user="ann")
    wait_until(lambda: marker in listener.ids() and marker in browser_seen(page), timeout=30,
               message="the marker")
    assert listener.ids() == accepted + [marker]
    assert browser_seen(page) == accepted + [marker]


def test_redis_killed_and_restarted_during_steady_publish(stack, page):
    redis_server, client, server, key = stack
    listener = watchers(server, page)
    with publishing(SteadyPublisher(rest_publisher(server, key, "steady.tick")), 50) as publisher:
        redis_server.kill()
        time.sleep(1.5)
        redis_server.start()
        wait_until(lambda: len(publisher.accepted) >= 150, timeout=30, message="publishing again")
    assert publisher.refused > 0, "the outage should have refused some publishes"
    assert_all_once_in_order(publisher.accepted, listener, page, client)
    listener.close()


def test_web_process_killed_and_restarted(stack, page):
    redis_server, client, server, key = stack
    listener = watchers(server, page)
    bus = Bus(client)
    with publishing(SteadyPublisher(lambda title: bus.publish("steady.tick", title)), 50) as publisher:
        server.kill()
        time.sleep(1.5)
        server.start()
        wait_until(lambda: listener.sio.connected, timeout=15, message="client reconnect")
        page.wait_for_selector("#connection[data-state=connected]", timeout=15_000)
        time.sleep(0.5)
    assert_all_once_in_order(publisher.accepted, listener, page, client)
    listener.close()


def test_browser_offline_for_30_seconds(stack, page, context):
    redis_server, client, server, key = stack
    listener = watchers(server, page)
    bus = Bus(client)
    slow = SteadyPublisher(lambda title: bus.publish("steady.tick", title), interval=0.1)
    with publishing(slow, 10) as publisher:
        context.set_offline(True)
        page.wait_for_selector("#connection[data-state=offline]")
        time.sleep(30)
        context.set_offline(False)
        page.wait_for_selector("#connection[data-state=connected]", timeout=15_000)
        time.sleep(0.5)
    assert_all_once_in_order(publisher.accepted, listener, page, client)
    listener.close()


def test_a_connect_refused_while_redis_is_away_is_retried_until_it_is_back(stack, page):
    """socket.io-client never retries a connect the server refused; Herald's client
    does, with backoff, when the refusal says the fault is passing (unavailable)."""
    redis_server, client, server, key = stack
    sign_in(page, server, "ann", "ann-password")
    page.evaluate("""() => {
      window.states = [];
      herald.dispatcher.on('connection', function (s) { window.states.push(s); });
    }""")
    redis_server.kill()
    # Reconnect now: the server can check the token but not the account: refused.
    page.evaluate("() => { herald.client.socket.disconnect(); herald.client.socket.connect(); }")
    page.wait_for_selector("#connection[data-state=reconnecting]")
    time.sleep(2)  # a few refused attempts, spaced by the client's backoff
    redis_server.start()
    page.wait_for_selector("#connection[data-state=connected]", timeout=30_000)
    assert "reconnecting" in page.evaluate("window.states")
    marker = Bus(client).publish("steady.after", "after the outage", user="ann")
    page.wait_for_selector(f'#feed li[data-id="{marker}"]', timeout=10_000)
