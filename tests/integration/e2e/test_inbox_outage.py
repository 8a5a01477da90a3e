"""The inbox during a Redis outage (issue 38, point 5), in Chromium: a change made
while Redis is away is refused at once and said so (never shown done, then put
back seconds later), the subscribe box keeps what was typed, and when Redis is
back the messages go by themselves and what failed is redone, once.

The outage is a paused redis-server (SIGSTOP): its connections stay open and
nothing answers, so every Redis call the server makes waits for its timeout;
that is the outage that cost ~8 s before the page said anything."""
import contextlib
import os
import re
import signal

import pytest
from playwright.sync_api import expect

from app.stream.publish import Bus
from app.users import accounts, read_state, subscriptions
from tests.integration.e2e.conftest import sign_in
from tests.integration.e2e.inbox import row
from tests.support import own_stack, wait_for

SOON = 2_000  # ms: "at once", well below the ~8 s the server's Redis timeouts took
BACK = 30_000  # ms for the page to notice Redis is back


@pytest.fixture
def stack(tmp_path):
    """A redis-server of its own (it gets paused) and a web server on it."""
    with own_stack(tmp_path) as (redis_server, client, server):
        accounts.create_user(client, "ann", "ann-password")
        subscriptions.add(client, "ann", ["ops"], limit=10)
        yield redis_server, client, server


@contextlib.contextmanager
def paused(redis_server):
    """Redis stopped in its tracks (SIGSTOP); SIGCONT afterwards, whatever happened."""
    os.kill(redis_server.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(redis_server.process.pid, signal.SIGCONT)


# Records whether the row of `id` ever showed read (lost its "unread" class), from now on.
WATCH_READ = """(id) => {
  window.everRead = false;
  var look = function () {
    var item = document.querySelector('#feed li.notification[data-id="' + id + '"]');
    if (item && !item.classList.contains('unread')) window.everRead = true;
  };
  new MutationObserver(look).observe(document.getElementById('feed'),
    {subtree: true, childList: true, attributes: true, attributeFilter: ['class']});
}"""


# Records every read change the page sends to the server, in window.readsSent.
COUNT_SENT = """() => {
  window.readsSent = [];
  var send = herald.client.markRead;
  herald.client.markRead = function (change) {
    window.readsSent.push(change);
    return send.apply(this, arguments);
  };
}"""


def test_marked_read_while_redis_is_away_is_refused_at_once_and_redone_when_it_is_back(stack, page):
    redis_server, client, server = stack
    bus = Bus(client)
    ids = [bus.publish("ops.deploy", f"deploy {i}") for i in range(3)]
    sign_in(page, server, "ann", "ann-password")
    expect(row(page, ids[1])).to_have_class(re.compile(r"\bunread\b"))
    page.evaluate(COUNT_SENT)
    with paused(redis_server):
        page.wait_for_selector("#status-banner[data-problem=redis]", timeout=BACK)
        page.evaluate(WATCH_READ, ids[1])
        page.locator(f'#feed li[data-id="{ids[1]}"] button.open').focus()
        page.keyboard.press("u")
        note = row(page, ids[1]).locator(".row-error")
        expect(note).to_be_visible(timeout=SOON)
        text = note.text_content()
        assert "not saved" in text and ".." not in text, text
        expect(note.locator("button.retry")).to_be_visible()
        assert page.evaluate("window.everRead") is False, "never shown read while it was not saved"
        expect(row(page, ids[1])).to_have_class(re.compile(r"\bunread\b"))
    # Redis is back: the note goes by itself, the change is made, and kept by the server.
    expect(row(page, ids[1]).locator(".row-error")).to_have_count(0, timeout=BACK)
    expect(row(page, ids[1])).not_to_have_class(re.compile(r"\bunread\b"))
    state = wait_for(lambda: read_state.get(client, "ann"),
                     lambda s: read_state.is_read(s, ids[1]), message="the server to hold it")
    assert not any(read_state.is_read(state, i) for i in (ids[0], ids[2])), "only what was asked"
    sent = page.evaluate("window.readsSent")
    assert [change.get("ids") for change in sent if change.get("ids")] == [[ids[1]]], \
        f"sent once, after the outage: {sent}"


def test_subscribing_while_redis_is_away_keeps_what_was_typed_and_says_so_at_once(stack, page):
    redis_server, client, server = stack
    sign_in(page, server, "ann", "ann-password")
    box = page.locator("#subscriptions input[name=topic]")
    error = page.locator("#subscriptions .error")
    with paused(redis_server):
        page.wait_for_selector("#status-banner[data-problem=redis]", timeout=BACK)
        box.fill("crm")
        box.press("Enter")
        expect(error).to_be_visible(timeout=SOON)
        expect(error).to_contain_text("not saved")
        assert ".." not in error.text_content()
        expect(box).to_have_value("crm")
    expect(error).to_be_hidden(timeout=BACK)  # cleared by itself when Redis is back
    expect(box).to_have_value("crm")
    page.locator("#subscriptions button[type=submit]").click()  # one action redoes it
    expect(page.locator('#subscriptions li[data-topic="crm"]')).to_be_visible()
    expect(box).to_have_value("")
    assert "crm" in subscriptions.list_topics(client, "ann")
