"""Which language a page speaks (app/web/i18n.py): the switch's cookie, else the best of
Accept-Language among English and German, else English; the sign-in messages follow."""
import pytest

from app.web import i18n


@pytest.mark.parametrize("header, lang", [
    (None, "en"),
    ("de-DE,de;q=0.9,en;q=0.8", "de"),
    ("en-US,en;q=0.9,de;q=0.8", "en"),
    ("fr-FR,fr;q=0.9,de;q=0.5", "de"),   # the best Herald speaks
    ("fr-FR,ja;q=0.5", "en"),             # none of them: English
])
def test_the_browser_language_picks_the_page_language(client, header, lang):
    page = client.get("/login", headers={"Accept-Language": header} if header else {})
    assert f'<html lang="{lang}">' in page.text


def test_the_switch_cookie_wins_over_the_browser(client):
    answer = client.get("/language?lang=en&next=/login", headers={"Accept-Language": "de"})
    assert answer.status_code == 302 and answer.headers["Location"] == "/login"
    page = client.get("/login", headers={"Accept-Language": "de"})
    assert '<html lang="en">' in page.text and "Sign in" in page.text


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "/\\evil", ""])
def test_the_switch_goes_back_to_this_site_only(client, target):
    answer = client.get("/language", query_string={"lang": "de", "next": target})
    assert answer.headers["Location"] == "/"


def test_an_unknown_language_changes_nothing(client):
    answer = client.get("/language?lang=xx&next=/login")
    assert "Set-Cookie" not in answer.headers


def test_a_wrong_password_is_said_in_german(client, user):
    form = client.get("/login").text
    csrf = form.split('name="csrf_token" value="')[1].split('"')[0]
    page = client.post("/login", data={"username": user[0], "password": "nope", "csrf_token": csrf},
                       headers={"Accept-Language": "de"})
    assert page.status_code == 401
    assert "Falscher Benutzername oder falsches Passwort." in page.text


def test_the_scripts_get_their_messages(app):
    with app.test_request_context("/", headers={"Accept-Language": "de"}):
        german = i18n.js_messages()
    with app.test_request_context("/"):
        english = i18n.js_messages()
    assert german["locale"] == "de"
    assert german["messages"]["Mark all read"] == "Alle als gelesen markieren"
    assert german["messages"]["{n} notification"] == ["{n} Benachrichtigung",
                                                      "{n} Benachrichtigungen"]
    assert "Anmelden" not in german["messages"].values()  # a template's, not a script's
    assert english == {"locale": "en", "messages": {}}


def test_outside_a_request_it_is_english(app):
    with app.app_context():
        assert i18n.select_locale() == "en"
