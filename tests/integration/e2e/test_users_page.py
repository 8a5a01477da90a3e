"""The Users page in Chromium (issue 38, the first ten minutes): an admin adds a user with a
password, and invites another with a one-time link that the invitee opens in a browser
of their own, sets a password with, and signs in; the link does not work twice; the
invites not yet used are listed, and a withdrawn one's link answers 410 as a spent one
does; reloading after adding or inviting adds nothing more (POST/redirect/GET); a
non-admin gets 403, a form without its CSRF token 400. By keyboard, at 390 px, in
German and dark, axe-core clean, times in the reader's zone; no CSP violation."""
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.users import accounts, invites
from tests.integration.e2e.conftest import (
    PHONE,
    accessibility_violations,
    horizontal_overflow,
    open_as_admin,
    sign_in,
)
from tests.integration.e2e.local_zone import assert_local_times, context  # noqa: F401  (the fixture)

SHOTS = Path("/tmp/shots/firstrun2")  # looked at by eye; not compared


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"{name}.png", full_page=True)


@pytest.fixture
def users_page(live_server, redis, page):
    page.set_viewport_size({"width": 1280, "height": 800})
    return open_as_admin(page, live_server, redis, "Users")


def test_an_admin_invites_a_user_who_sets_a_password_and_signs_in_once(users_page, live_server,
                                                                       redis, contexts):
    page = users_page
    expect(page.locator("h1")).to_have_text("Users")
    expect(page.locator('nav a[aria-current="page"]')).to_have_text("Users")
    expect(page.locator('.users-table tr[data-user="root"]')).to_contain_text("admin")
    assert_local_times(page.locator(".users-table"), 1)  # in the reader's zone
    expect(page.locator("#add-user .password-field")).to_be_hidden()  # an invite by default

    page.fill("#add-user [name=name]", "carol")
    page.click("#add-user button[type=submit]")
    link = page.locator("#invite-link")
    expect(link).to_be_focused()
    expect(page.locator("#user-added")).to_contain_text("Invited carol.")
    assert_local_times(page.locator("#user-added"), 1)  # until when, in her zone
    url = link.input_value()
    assert url.startswith(live_server.url + "/invite/")
    assert accounts.get_user(redis, "carol") is None  # not until she sets her password
    assert accessibility_violations(page) == []
    shot(page, "users-invited-1280")

    # carol, in a browser of her own.
    carol = contexts().new_page()
    carol.goto(url)
    expect(carol.locator("h1")).to_have_text("Welcome to Herald, carol")
    assert accessibility_violations(carol) == []
    carol.fill("[name=password]", "carols-password")
    carol.fill("[name=confirm]", "carols-passwort")
    carol.click("button[type=submit]")
    expect(carol.locator(".flash")).to_have_text("The two passwords differ: type the same one twice.")
    carol.fill("[name=password]", "carols-password")
    carol.fill("[name=confirm]", "carols-password")
    carol.click("button[type=submit]")
    expect(carol.locator(".flash")).to_have_text("Your password is set: sign in as carol.")
    sign_in(carol, live_server, "carol", "carols-password")
    expect(carol.locator(".session .who")).to_have_text("carol")
    assert accounts.get_user(redis, "carol")["admin"] is False

    # The link again, in yet another browser: spent.
    other = contexts().new_page()
    answer = other.goto(url)
    assert answer.status == 410
    expect(other.locator("h1")).to_have_text("This invite link cannot be used")
    expect(other.locator("[name=password]")).to_have_count(0)
    assert accounts.authenticate(redis, "carol", "carols-password")

    page.goto(live_server.url + "/users")
    expect(page.locator('.users-table tr[data-user="carol"]')).to_contain_text("user")


def test_times_are_checked_once_a_slow_script_has_put_them_in_the_readers_zone(users_page):
    """The server writes UTC and the page's script puts in the reader's zone after the
    page has arrived; a check of the times must wait for it (one CI run read the UTC)."""
    page = users_page

    def late(route):  # the page's script, run 1.5 s after it arrives
        body = route.fetch().text()
        route.fulfill(body=f"setTimeout(function () {{ {body} }}, 1500);",
                      content_type="application/javascript")
    page.route("**/js/pages/users.js", late)
    page.reload()
    assert_local_times(page.locator(".users-table"), 1)


def pending_invites(redis):
    """How many invite records Redis holds (used or withdrawn ones are gone)."""
    return len(list(redis.scan_iter(match=invites.INVITE + "*")))


def test_reloading_after_adding_or_inviting_adds_nothing_more(users_page, live_server, redis):
    page = users_page
    page.fill("#add-user [name=name]", "carol")
    page.click("#add-user button[type=submit]")
    expect(page.locator("#invite-link")).to_be_focused()
    assert pending_invites(redis) == 1
    page.reload()
    page.wait_for_selector("#connection[data-state=connected]")
    assert page.url == live_server.url + "/users"
    assert pending_invites(redis) == 1  # not a second link for carol
    expect(page.locator("#invite-link")).to_have_count(0)  # shown once, then gone
    expect(page.locator("#add-user-error")).to_have_count(0)

    page.click("#add-user input[name=way][value=password]")
    page.fill("#add-user [name=name]", "dave")
    page.fill("#add-user [name=password]", "daves-password")
    page.click("#add-user button[type=submit]")
    expect(page.locator("#user-added")).to_contain_text("Added dave.")
    page.reload()
    page.wait_for_selector("#connection[data-state=connected]")
    expect(page.locator("#add-user-error")).to_have_count(0)  # not "There is a user dave"
    expect(page.locator("#user-added")).to_have_count(0)
    expect(page.locator('.users-table tr[data-user="dave"]')).to_have_count(1)


def test_pending_invites_are_listed_and_a_withdrawn_link_answers_410(users_page, live_server,
                                                                    redis, contexts):
    page = users_page
    page.fill("#add-user [name=name]", "carol")
    page.click("#add-user button[type=submit]")
    url = page.locator("#invite-link").input_value()
    expect(page.locator("#user-added")).to_contain_text("it cannot be shown again")
    page.click("#user-added .copy-link")
    expect(page.locator("#user-added .copy-status")).not_to_be_empty()
    page.fill("#add-user [name=name]", "dan")
    page.check("#add-user [name=admin]")
    page.click("#add-user button[type=submit]")
    expect(page.locator("#user-added")).to_contain_text("Invited dan.")

    rows = page.locator(".invites-table tbody tr")
    expect(rows).to_have_count(2)
    carol = page.locator('.invites-table tr[data-invite-name="carol"]')
    expect(carol).to_contain_text("user")
    expect(carol).to_contain_text("root")  # who made it
    expect(page.locator('.invites-table tr[data-invite-name="dan"]')).to_contain_text("admin")
    assert_local_times(page.locator(".invites-table"), 2)  # expiry, in her zone
    expect(page.locator("#add-user-title ~ *, .invites-card").first).to_be_visible()
    assert accessibility_violations(page) == []
    shot(page, "users-pending-1280")

    # Withdrawn by keyboard: the row goes, the page says so, the link is dead.
    carol.locator("button", has_text="Withdraw").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#invite-withdrawn")).to_contain_text("Withdrew the invite for carol")
    expect(page.locator("#invite-withdrawn")).to_be_focused()
    expect(rows).to_have_count(1)
    assert page.url == live_server.url + "/users"
    other = contexts().new_page()
    answer = other.goto(url)
    assert answer.status == 410
    expect(other.locator("h1")).to_have_text("This invite link cannot be used")
    assert pending_invites(redis) == 1
    page.set_viewport_size(PHONE)
    assert horizontal_overflow(page) == 0
    assert accessibility_violations(page) == []
    shot(page, "users-withdrawn-390")
    page.emulate_media(color_scheme="dark")
    assert accessibility_violations(page) == []
    shot(page, "users-withdrawn-dark-390")


def test_an_admin_adds_a_user_with_a_password_by_keyboard_on_a_phone(users_page, live_server, redis):
    page = users_page
    page.set_viewport_size(PHONE)
    page.locator("#add-user [name=name]").focus()
    page.keyboard.type("dave")
    page.keyboard.press("Tab")       # "An admin"
    page.keyboard.press("Space")
    page.keyboard.press("Tab")       # the way: "An invite link" (checked)
    page.keyboard.press("ArrowDown")  # "A password I set now"
    expect(page.locator("#add-user .password-field")).to_be_visible()
    page.keyboard.press("Tab")
    expect(page.locator("#add-user [name=password]")).to_be_focused()
    page.keyboard.type("short")
    page.keyboard.press("Enter")
    # The browser's own check (minlength) stops it first; the server's says the same.
    assert accounts.get_user(redis, "dave") is None
    page.keyboard.press("Control+A")
    page.keyboard.type("daves-password")
    page.keyboard.press("Enter")
    expect(page.locator("#user-added")).to_contain_text("Added dave.")
    expect(page.locator("#user-added")).to_be_focused()
    expect(page.locator('.users-table tr[data-user="dave"]')).to_contain_text("admin")
    assert accounts.authenticate(redis, "dave", "daves-password")["admin"] is True
    assert horizontal_overflow(page) == 0
    assert accessibility_violations(page) == []
    shot(page, "users-added-390")

    # A name that is taken: said, and the focus back on the name.
    page.fill("#add-user [name=name]", "dave")
    page.click("#add-user button[type=submit]")
    expect(page.locator("#add-user-error")).to_have_text(
        "There is a user dave already: choose another name.")
    expect(page.locator("#add-user [name=name]")).to_be_focused()


def test_a_non_admin_gets_403_and_a_form_without_its_csrf_token_400(live_server, redis, page):
    accounts.create_user(redis, "erin", "erins-password")
    sign_in(page, live_server, "erin", "erins-password")
    expect(page.locator("nav a", has_text="Users")).to_have_count(0)
    assert page.goto(live_server.url + "/users").status == 403
    token = page.evaluate("fetch('/').then(r => r.text()).then(t => "
                          "JSON.parse(new DOMParser().parseFromString(t, 'text/html')"
                          ".getElementById('herald-config').textContent).csrfToken)")
    answer = page.request.post(live_server.url + "/users",
                               form={"csrf_token": token, "name": "mallory", "way": "password",
                                     "password": "mallorys-password", "admin": "1"})
    assert answer.status == 403
    assert accounts.get_user(redis, "mallory") is None
    token_of_gina = invites.create(redis, "gina", by="root")
    withdraw = f"{live_server.url}/users/invites/{invites.digest(token_of_gina)}/withdraw"
    assert page.request.post(withdraw, form={"csrf_token": token}).status == 403
    assert invites.pending(redis, token_of_gina) is not None

    # An admin's browser, sent a form from elsewhere (no CSRF token): refused.
    accounts.create_user(redis, "root", "root-password", admin=True)
    admin = page.context.browser.new_context().new_page()
    try:
        sign_in(admin, live_server, "root", "root-password")
        forged = admin.request.post(live_server.url + "/users",
                                    form={"name": "mallory", "way": "password",
                                          "password": "mallorys-password"})
        assert forged.status == 400
        assert admin.request.post(withdraw, form={}).status == 400
    finally:
        admin.context.close()
    assert accounts.get_user(redis, "mallory") is None
    assert invites.pending(redis, token_of_gina) is not None


def test_the_users_and_invite_pages_in_german_and_dark_on_a_phone(live_server, redis, contexts):
    accounts.create_user(redis, "root", "root-password", admin=True)
    page = contexts(locale="de-DE", color_scheme="dark", viewport=PHONE).new_page()
    sign_in(page, live_server, "root", "root-password")
    page.goto(live_server.url + "/users")
    expect(page.locator("h1")).to_have_text("Benutzer")
    page.fill("#add-user [name=name]", "frank")
    page.click("#add-user button[type=submit]")
    expect(page.locator("#user-added")).to_contain_text("frank eingeladen.")
    assert horizontal_overflow(page) == 0
    assert accessibility_violations(page) == []
    shot(page, "users-invited-de-dark-390")
    token = page.locator("#invite-link").input_value().rsplit("/", 1)[1]
    assert invites.pending(redis, token)["name"] == "frank"

    page.goto(live_server.url + "/invite/" + token)
    expect(page.locator("h1")).to_have_text("Willkommen bei Herald, frank")
    assert accessibility_violations(page) == []
    shot(page, "invite-de-dark-390")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(live_server.url + "/users")
    expect(page.locator('.users-table tr[data-user="root"]')).to_contain_text("Admin")
    expect(page.locator('.invites-table tr[data-invite-name="frank"]')).to_contain_text("Benutzer")
    expect(page.locator(".invites-table button")).to_have_text("Zurückziehen")
    shot(page, "users-de-dark-1280")
    assert horizontal_overflow(page) == 0
    page.emulate_media(color_scheme="light")
    assert accessibility_violations(page) == []
    shot(page, "users-de-light-1280")
