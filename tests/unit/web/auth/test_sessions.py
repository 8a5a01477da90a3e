"""Sessions end when their user signs out, anywhere, or has their tokens revoked;
sign-in takes as long for an unknown name as for a known one."""
from werkzeug import security

from app import create_app
from app.settings import TestConfig
from app.users import accounts
from tests.support import free_port, sign_in


def session_cookie(client):
    return client.get_cookie("herald_session").value


def test_signing_out_ends_every_session_of_the_user_and_copies_of_it(app, user):
    first, second = app.test_client(), app.test_client()
    sign_in(first, *user)
    sign_in(second, *user)  # another device
    copied = app.test_client()
    copied.set_cookie("herald_session", session_cookie(first))
    assert copied.get("/auth/session-token").status_code == 200
    csrf = first.get("/").get_data(as_text=True).split('name="csrf_token" value="')[1].split('"')[0]
    first.post("/logout", data={"csrf_token": csrf})
    for client in (first, second, copied):
        assert client.get("/auth/session-token").status_code == 401
        assert client.get("/").status_code == 302  # back to the sign-in page


def test_revoking_tokens_ends_sessions_too(app, redis, user):
    browser = app.test_client()
    sign_in(browser, *user)
    assert browser.get("/auth/session-token").status_code == 200
    accounts.revoke_tokens(redis, user[0])
    assert browser.get("/auth/session-token").status_code == 401


def test_an_unknown_name_costs_a_password_check_like_a_known_one(redis, user, monkeypatch):
    """So that the answer's timing does not tell which names exist."""
    checks = []
    real = security.check_password_hash
    monkeypatch.setattr(accounts, "check_password_hash",
                        lambda stored, given: checks.append(given) or real(stored, given))
    assert accounts.authenticate(redis, "nobody", "some-password") is None
    assert accounts.authenticate(redis, ["not", "a", "name"], "x") is None
    assert accounts.authenticate(redis, user[0], "wrong-password") is None
    assert checks == ["some-password", "x", "wrong-password"]


def test_signing_in_while_redis_is_away_is_503_not_500(redis_server):
    app = create_app(TestConfig(f"redis://127.0.0.1:{free_port()}/0"))
    client = app.test_client()
    reply = client.post("/auth/token", json={"username": "ann", "password": "ann-password"})
    assert reply.status_code == 503 and "cannot reach its database" in reply.get_json()["error"]
