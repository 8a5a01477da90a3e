"""The example host app (examples/board) and Herald, on two origins, in real Chromium.

Two browser contexts sign in to the example app as two of *its* users (no
Herald accounts). The board's cards are a Backbone collection that
Herald.sync keeps live: what one user changes (the board commits it, and
its outbox relay publishes the data event), the other sees without a
reload; an assignment alert reaches its user alone. The outbox itself, and
the page's catch-up from its rendered cursor: test_example_board_outbox.py. Every page is checked
for Content-Security-Policy violations (tests/integration/e2e/conftest.py).
"""
import pytest
import requests
from playwright.sync_api import expect

from app.stream.keys import STREAM
from app.users import accounts
from tests.integration.e2e.conftest import accessibility_violations, no_horizontal_scroll
from tests.support import EXAMPLE_JWT_SECRET, ExampleApp, LiveServer, free_port

SEEN = 5_000  # ms: generous on a busy machine; bench/edit_latency.py measures the real figure


@pytest.fixture
def board(redis_server, redis, tmp_path):
    example_port = free_port()
    herald = LiveServer(redis_server.url, tmp_path, JWT_SECRET=EXAMPLE_JWT_SECRET,
                        SOCKETIO_ORIGINS=f"http://127.0.0.1:{example_port}")
    herald.start()
    example = ExampleApp(herald.url, accounts.create_api_key(redis, "board"), tmp_path,
                         example_port)
    example.start()
    yield herald, example
    example.stop()
    herald.stop()


def open_board(contexts, example, user, **options):
    page = contexts(**options).new_page()
    page.set_default_timeout(10_000)
    page.goto(example.url + "/login")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", "board-demo")
    page.click("button[type=submit]")
    page.wait_for_selector("#live[data-state=connected]")
    # Every notification the page's Herald client triggers, in order, before any view.
    page.evaluate("""() => {
      window.heard = [];
      window.replays = [];
      board.herald.on('notification', function (n) { window.heard.push(n.id); });
      board.herald.on('replayed', function (r) { window.replays.push(r); });
    }""")
    return page


def card(page, title):
    return page.locator(".card-item", has=page.locator(".title", has_text=title))


def add_card(page, title):
    page.fill("#new-title", title)
    page.click("#new-card button[type=submit]")
    expect(card(page, title)).to_be_visible()


def test_what_one_user_changes_the_other_sees_without_a_reload(board, contexts):
    herald, example = board
    alice, bob = open_board(contexts, example, "alice"), open_board(contexts, example, "bob")
    add_card(alice, "Write the release notes")
    expect(card(bob, "Write the release notes")).to_be_visible(timeout=SEEN)

    item = card(alice, "Write the release notes")
    item.locator("button.edit").click()
    alice.fill(".edit-form input[name=title]", "Write the release notes for 2.0")
    alice.click(".edit-form button[type=submit]")
    expect(card(bob, "Write the release notes for 2.0")).to_be_visible(timeout=SEEN)
    expect(bob.locator(".card-item")).to_have_count(1)

    card(alice, "for 2.0").locator("select.move").select_option("doing")
    expect(bob.locator('[data-column="doing"] .card-item .title')).to_have_text(
        ["Write the release notes for 2.0"], timeout=SEEN)

    card(alice, "for 2.0").locator("button.delete").click()
    expect(bob.locator(".card-item")).to_have_count(0, timeout=SEEN)
    assert bob.url == example.url + "/"  # never reloaded
    # Every change reached bob once, as it happened.
    assert len(bob.evaluate("window.heard")) == 4


def test_offline_for_ten_seconds_then_back_sees_every_change_exactly_once(board, contexts, redis):
    herald, example = board
    alice = open_board(contexts, example, "alice")
    bob = open_board(contexts, example, "bob")
    bob_context = bob.context
    add_card(alice, "Stays")
    add_card(alice, "Goes away")
    expect(bob.locator(".card-item")).to_have_count(2, timeout=SEEN)
    before = redis.xrevrange(STREAM, count=1)[0][0].decode()

    bob_context.set_offline(True)
    bob.wait_for_selector("#live[data-state=offline]")
    add_card(alice, "Added while bob was away")
    card(alice, "Stays").locator("select.move").select_option("done")
    card(alice, "Goes away").locator("button.delete").click()
    expect(alice.locator(".card-item")).to_have_count(2)
    bob.wait_for_timeout(10_000)
    bob_context.set_offline(False)
    bob.wait_for_selector("#live[data-state=connected]", timeout=20_000)

    expect(bob.locator('[data-column="todo"] .card-item .title')).to_have_text(
        ["Added while bob was away"], timeout=SEEN)
    expect(bob.locator('[data-column="done"] .card-item .title')).to_have_text(["Stays"])
    expect(bob.locator(".card-item")).to_have_count(2)
    # It came back by replay: the three changes, from where bob's client had got to.
    # (`replayed` follows the replayed notifications, and the first connect's own
    # replay, of none, may land after open_board started recording.)
    bob.wait_for_function("() => window.replays.some(r => r.count > 0)")
    assert [r["count"] for r in bob.evaluate("window.replays") if r["count"]] == [3]
    missed = [entry_id.decode() for entry_id, _ in redis.xrange(STREAM, min=f"({before}")]
    assert len(missed) == 3
    heard = bob.evaluate("window.heard")
    assert heard[-3:] == missed and len(heard) == len(set(heard)) == 5
    # The activity log lists each change once.
    for entry_id in missed:
        expect(bob.locator(f'#activity li[data-id="{entry_id}"]')).to_have_count(1)


def test_an_assignment_alert_reaches_its_user_only(board, contexts):
    herald, example = board
    alice, bob = open_board(contexts, example, "alice"), open_board(contexts, example, "bob")
    carol = open_board(contexts, example, "carol")
    add_card(alice, "Fix the login page")
    expect(card(carol, "Fix the login page")).to_be_visible(timeout=SEEN)
    card(alice, "Fix the login page").locator("select.assign").select_option("bob")
    expect(bob.locator("#alerts .alert")).to_contain_text("alice assigned you “Fix the login page”",
                                                          timeout=SEEN)
    # carol saw the assignment on the board, and no alert; nor did alice. Each then
    # gets an alert of her own, after which bob's is not coming to either.
    expect(card(carol, "Fix the login page").locator("select.assign")).to_have_value("bob",
                                                                                     timeout=SEEN)
    add_card(alice, "Second card")
    add_card(alice, "Third card")
    card(alice, "Second card").locator("select.assign").select_option("carol")
    card(alice, "Third card").locator("select.assign").select_option("alice")
    expect(carol.locator("#alerts .alert strong")).to_have_text(
        ["alice assigned you “Second card”"], timeout=SEEN)
    expect(alice.locator("#alerts .alert strong")).to_have_text(
        ["alice assigned you “Third card”"], timeout=SEEN)
    expect(bob.locator("#alerts .alert strong")).to_have_text(
        ["alice assigned you “Fix the login page”"])


def test_heralds_own_policy_stays_strict_for_the_client_it_serves(board):
    herald, example = board
    reply = requests.get(herald.url + "/client/herald.js", timeout=5)
    policy = reply.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe" not in policy
    assert reply.headers["Cross-Origin-Resource-Policy"] == "cross-origin"
    page_policy = requests.get(example.url + "/login", timeout=5).headers["Content-Security-Policy"]
    assert f"script-src 'self' {herald.url}" in page_policy and "unsafe" not in page_policy


def test_the_board_at_360_px_with_the_keyboard_alone_passes_an_accessibility_check(board, contexts):
    herald, example = board
    page = contexts(viewport={"width": 360, "height": 740}).new_page()
    page.goto(example.url + "/login")
    assert accessibility_violations(page) == [] and no_horizontal_scroll(page)
    page.keyboard.type("carol")  # the user name field has the focus
    page.keyboard.press("Tab")
    page.keyboard.type("board-demo")
    page.keyboard.press("Enter")
    page.wait_for_selector("#live[data-state=connected]")
    page.focus("#new-title")
    page.keyboard.type("Made with the keyboard")
    page.keyboard.press("Enter")
    expect(card(page, "Made with the keyboard")).to_be_visible()
    page.keyboard.press("Tab")  # the Add button
    page.keyboard.press("Tab")  # the card's Edit button
    page.keyboard.press("Enter")
    page.keyboard.press("Control+A")
    page.keyboard.type("Renamed with the keyboard")
    page.keyboard.press("Enter")
    expect(card(page, "Renamed with the keyboard")).to_be_visible()
    assert no_horizontal_scroll(page)
    assert accessibility_violations(page) == []


# ---- A field being edited is never overwritten by a live change ---------------------------

def card_by_id(page, card_id):
    return page.locator(f'.card-item[data-id="{card_id}"]')


def shared_card(contexts, example, title, **alice_options):
    """alice and bob on the board with one card of ``title`` that both see; its id."""
    alice = open_board(contexts, example, "alice", **alice_options)
    bob = open_board(contexts, example, "bob")
    add_card(alice, title)
    expect(card(bob, title)).to_be_visible(timeout=SEEN)
    return alice, bob, card(alice, title).get_attribute("data-id")


def start_typing(page, card_id, text):
    """Open the card's title for editing and type ``text`` over it, by keyboard."""
    item = card_by_id(page, card_id)
    item.locator("button.edit").click()
    field = item.locator("input[name=title]")
    expect(field).to_be_focused()
    page.keyboard.press("Control+A")
    page.keyboard.type(text)
    return field


def rename(page, card_id, new_title):
    item = card_by_id(page, card_id)
    item.locator("button.edit").click()
    item.locator("input[name=title]").fill(new_title)
    item.locator(".edit-form button[type=submit]").click()
    expect(card(page, new_title)).to_be_visible()


def test_a_title_being_typed_is_kept_and_their_change_is_offered(board, contexts):
    herald, example = board
    alice, bob, card_id = shared_card(contexts, example, "Plan the launch")
    field = start_typing(alice, card_id, "Plan the launch party")

    rename(bob, card_id, "Launch plan, by bob")
    notice = card_by_id(alice, card_id).locator(".conflict")
    expect(notice).to_contain_text("Changed by bob", timeout=SEEN)
    expect(notice).to_contain_text("Launch plan, by bob")
    # Her text and her place in it are untouched: she types on.
    expect(field).to_have_value("Plan the launch party")
    expect(field).to_be_focused()
    alice.keyboard.type(" on Friday")
    expect(field).to_have_value("Plan the launch party on Friday")
    # The notice is said politely to a screen reader, in the card's live region.
    expect(card_by_id(alice, card_id).locator('[aria-live="polite"]:has(.conflict)')).to_contain_text(
        "Changed by bob")
    expect(card_by_id(alice, card_id)).to_have_attribute("data-version", "2")

    notice.get_by_role("button", name="Use theirs").click()
    expect(field).to_have_value("Launch plan, by bob")
    expect(field).to_be_focused()
    expect(notice).to_have_count(0)
    field.press("Enter")  # saving what is now theirs changes nothing
    expect(card(alice, "Launch plan, by bob")).to_be_visible()
    expect(card(bob, "Launch plan, by bob")).to_be_visible()


def test_keep_mine_then_save_writes_mine_for_everyone_by_keyboard_at_360_px(board, contexts):
    herald, example = board
    alice, bob, card_id = shared_card(contexts, example, "Order the stickers",
                                      viewport={"width": 360, "height": 740})
    field = start_typing(alice, card_id, "Order 500 stickers")
    alice.keyboard.press("Tab")  # to Save: the field is no longer focused, but changed
    rename(bob, card_id, "Order 200 stickers")
    notice = card_by_id(alice, card_id).locator(".conflict")
    expect(notice).to_contain_text("Changed by bob: “Order 200 stickers”", timeout=SEEN)
    expect(field).to_have_value("Order 500 stickers")
    assert no_horizontal_scroll(alice)
    assert accessibility_violations(alice) == []

    alice.keyboard.press("Tab")  # Cancel
    alice.keyboard.press("Tab")  # Use theirs
    alice.keyboard.press("Tab")  # Keep mine
    expect(notice.get_by_role("button", name="Keep mine")).to_be_focused()
    alice.keyboard.press("Enter")
    expect(notice).to_have_count(0)
    expect(field).to_be_focused()
    expect(field).to_have_value("Order 500 stickers")
    alice.keyboard.press("Enter")  # save
    expect(card(alice, "Order 500 stickers")).to_be_visible()
    expect(card(bob, "Order 500 stickers")).to_be_visible(timeout=SEEN)
    expect(card_by_id(bob, card_id)).to_have_attribute("data-version", "3")


def test_other_fields_of_the_card_still_change_live_while_she_types(board, contexts):
    herald, example = board
    alice, bob, card_id = shared_card(contexts, example, "Book the venue")
    field = start_typing(alice, card_id, "Book the big venue")

    card(bob, "Book the venue").locator("select.assign").select_option("carol")
    expect(card_by_id(alice, card_id).locator("select.assign")).to_have_value("carol",
                                                                              timeout=SEEN)
    card(bob, "Book the venue").locator("select.move").select_option("doing")
    expect(alice.locator(f'[data-column="doing"] .card-item[data-id="{card_id}"]')).to_have_count(
        1, timeout=SEEN)
    expect(card_by_id(alice, card_id).locator("select.move")).to_have_value("doing")
    expect(card_by_id(alice, card_id).locator(".meta")).to_contain_text("v3 · bob")
    # Her field was neither touched nor left: no notice, her text, her focus.
    expect(card_by_id(alice, card_id).locator(".conflict")).to_have_count(0)
    expect(field).to_have_value("Book the big venue")
    expect(field).to_be_focused()
    alice.keyboard.type(" downtown")
    alice.keyboard.press("Enter")
    expect(card(bob, "Book the big venue downtown")).to_be_visible(timeout=SEEN)
    expect(card_by_id(bob, card_id).locator("select.assign")).to_have_value("carol")


def test_a_focused_select_is_not_changed_under_her_either(board, contexts):
    herald, example = board
    alice, bob, card_id = shared_card(contexts, example, "Print the badges")
    column = card_by_id(alice, card_id).locator("select.move")
    column.focus()

    card(bob, "Print the badges").locator("select.move").select_option("done")
    notice = card_by_id(alice, card_id).locator(".conflict")
    expect(notice).to_contain_text("Column changed by bob: Done", timeout=SEEN)
    expect(column).to_have_value("todo")
    expect(column).to_be_focused()
    expect(alice.locator(f'[data-column="todo"] .card-item[data-id="{card_id}"]')).to_have_count(1)

    notice.get_by_role("button", name="Use theirs").click()
    expect(alice.locator(f'[data-column="done"] .card-item[data-id="{card_id}"]')).to_have_count(1)
    expect(column).to_have_value("done")
    expect(column).to_be_focused()
    expect(notice).to_have_count(0)
