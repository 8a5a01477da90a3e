"""The example board (examples/board): a card deleted by one user while another edits it.

Her half-typed text is not thrown away: where the card was, a notice says it
was deleted and holds her text, with the focus on its first action (never on
<body>), offering to recreate the card with her text or to copy it. The
board's fixture and helpers are test_example_board.py's.
"""
from pathlib import Path

from playwright.sync_api import expect

from tests.integration.e2e.conftest import PHONE, accessibility_violations, no_horizontal_scroll
from tests.integration.e2e.test_example_board import (
    SEEN,
    card,
    card_by_id,
    shared_card,
    start_typing,
)
from tests.integration.e2e.test_example_board import board as board  # noqa: F401 (the fixture)

SHOTS = Path("/tmp/shots/firstrun")  # looked at by eye; not compared


def delete_card(page, title):
    card(page, title).locator("button.delete").click()
    expect(card(page, title)).to_have_count(0)


def test_her_text_is_kept_where_the_deleted_card_was_and_can_be_recreated(board, contexts):
    herald, example = board
    alice, bob, card_id = shared_card(contexts, example, "Draft the newsletter",
                                      viewport={"width": 1280, "height": 800})
    field = start_typing(alice, card_id, "Draft the newsletter, with the spring dates")

    delete_card(bob, "Draft the newsletter")
    notice = alice.locator(f'.card-deleted[data-id="{card_id}"]')
    expect(notice).to_contain_text("deleted", timeout=SEEN)
    expect(field).to_have_count(0)
    # Where the card was (its column), with her text, and the focus on its first action.
    expect(alice.locator(f'[data-column="todo"] .card-deleted[data-id="{card_id}"]')).to_have_count(1)
    expect(notice.locator("textarea")).to_have_value("Draft the newsletter, with the spring dates")
    recreate = notice.get_by_role("button", name="Recreate the card")
    expect(recreate).to_be_focused()
    assert alice.evaluate("document.activeElement !== document.body")
    assert accessibility_violations(alice) == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    alice.screenshot(path=SHOTS / "board-card-deleted-1280.png")

    alice.keyboard.press("Enter")
    expect(notice).to_have_count(0)
    made = card(alice, "Draft the newsletter, with the spring dates")
    expect(made).to_be_visible()
    expect(card(bob, "Draft the newsletter, with the spring dates")).to_be_visible(timeout=SEEN)
    assert made.get_attribute("data-id") != card_id
    expect(made.locator("button.edit")).to_be_focused()  # the focus goes on with her card


def test_her_text_can_be_copied_and_the_notice_dismissed_on_a_phone(board, contexts):
    herald, example = board
    alice, bob, card_id = shared_card(contexts, example, "Call the printer", viewport=PHONE,
                                      permissions=["clipboard-read", "clipboard-write"])
    start_typing(alice, card_id, "Call the printer about the posters")
    delete_card(bob, "Call the printer")
    notice = alice.locator(f'.card-deleted[data-id="{card_id}"]')
    expect(notice.get_by_role("button", name="Recreate the card")).to_be_focused(timeout=SEEN)
    assert no_horizontal_scroll(alice)
    SHOTS.mkdir(parents=True, exist_ok=True)
    alice.screenshot(path=SHOTS / "board-card-deleted-390.png")

    alice.keyboard.press("Tab")
    copy = notice.get_by_role("button", name="Copy the text")
    expect(copy).to_be_focused()
    alice.keyboard.press("Enter")
    expect(notice.locator("[role=status]")).to_have_text("Copied.")
    assert alice.evaluate("navigator.clipboard.readText()") == "Call the printer about the posters"

    alice.keyboard.press("Tab")
    expect(notice.get_by_role("button", name="Dismiss")).to_be_focused()
    alice.keyboard.press("Enter")
    expect(notice).to_have_count(0)
    expect(alice.locator("#new-title")).to_be_focused()  # no card left: to the new card's field
    expect(alice.locator(".card-item")).to_have_count(0)


def test_a_card_deleted_while_only_focused_says_so_where_it_was(board, contexts):
    herald, example = board
    alice, bob, card_id = shared_card(contexts, example, "Book the room")
    card_by_id(alice, card_id).locator("select.assign").focus()
    delete_card(bob, "Book the room")
    notice = alice.locator(f'.card-deleted[data-id="{card_id}"]')
    expect(notice).to_contain_text("“Book the room” was deleted", timeout=SEEN)
    expect(notice.get_by_role("button", name="Dismiss")).to_be_focused()
    expect(notice.locator("textarea")).to_have_count(0)  # nothing typed: nothing to keep


def test_her_own_delete_and_an_unwatched_card_leave_no_notice(board, contexts):
    herald, example = board
    alice, bob, card_id = shared_card(contexts, example, "Tidy the shelf")
    start_typing(alice, card_id, "Tidy the top shelf")
    card_by_id(alice, card_id).locator("button.delete").click()
    expect(alice.locator(".card-item, .card-deleted")).to_have_count(0)
    expect(bob.locator(".card-item, .card-deleted")).to_have_count(0, timeout=SEEN)
