"""Sign-in pages, tokens, API keys and accounts."""
import pytest

from app import accounts
from app.auth import tokens
from tests.support import sign_in


def test_token_for_good_credentials(client, user):
    reply = client.post("/auth/token", json={"username": user[0], "password": user[1]})
    assert reply.status_code == 200
    body = reply.get_json()
    assert body["expires_in"] == 3600
    assert tokens.verify("test-secret-key", body["token"], 3600) == user[0]


@pytest.mark.parametrize("credentials", [
    {"username": "bob", "password": "wrong-password"},
    {"username": "nobody", "password": "bob-password"},
    {"username": "bob"},
    {"username": ["bob"], "password": "bob-password"},
])
def test_bad_credentials_are_401(client, user, credentials):
    reply = client.post("/auth/token", json=credentials)
    assert reply.status_code == 401
    assert reply.get_json() == {"error": "wrong username or password"}


def test_token_request_must_be_json(client):
    reply = client.post("/auth/token", data="username=bob")
    assert reply.status_code == 400 and "JSON" in reply.get_json()["error"]


def test_tokens_expire_and_are_tamper_proof():
    token = tokens.issue("k", "ann")
    assert tokens.verify("k", token, 60) == "ann"
    with pytest.raises(tokens.TokenError, match="expired"):
        tokens.verify("k", token, -1)
    with pytest.raises(tokens.TokenError, match="invalid"):
        tokens.verify("other-key", token, 60)
    with pytest.raises(tokens.TokenError, match="invalid"):
        tokens.verify("k", token[:-2] + "xx", 60)
    with pytest.raises(tokens.TokenError, match="missing"):
        tokens.verify("k", None, 60)


def test_dashboard_needs_sign_in(client):
    reply = client.get("/")
    assert reply.status_code == 302 and reply.headers["Location"].endswith("/login")


def test_sign_in_and_out(client, user):
    assert sign_in(client, user[0], "wrong-password").status_code == 401
    assert sign_in(client, *user).status_code == 302
    page = client.get("/").get_data(as_text=True)
    assert "Live feed" in page and user[0] in page
    assert client.get("/auth/session-token").status_code == 200
    import re
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    assert client.post("/logout", data={"csrf_token": csrf}).status_code == 302
    assert client.get("/").status_code == 302
    assert client.get("/auth/session-token").status_code == 401


def test_login_form_without_csrf_token_is_refused(client, user):
    reply = client.post("/login", data={"username": user[0], "password": user[1]})
    assert reply.status_code == 400
    assert client.get("/").status_code == 302


def test_accounts_rules(redis):
    accounts.create_user(redis, "ann", "long-enough")
    with pytest.raises(accounts.AccountError, match="already exists"):
        accounts.create_user(redis, "ann", "another-one")
    with pytest.raises(accounts.AccountError, match="at least 8"):
        accounts.create_user(redis, "cy", "short")
    with pytest.raises(accounts.AccountError, match="name: "):
        accounts.create_user(redis, "bad name", "long-enough")
    assert accounts.authenticate(redis, "ann", "long-enough") == {"name": "ann", "admin": False}
    assert accounts.authenticate(redis, "ann", "wrong-pass") is None
    assert accounts.count_users(redis) == 1


def test_api_keys_are_stored_only_as_hashes(redis):
    key = accounts.create_api_key(redis, "ci")
    assert key.startswith("hk_") and len(key) > 40
    assert accounts.api_key_name(redis, key) == "ci"
    assert accounts.api_key_name(redis, key + "x") is None
    dump = b"".join(redis.dump(k) or b"" for k in redis.keys("*"))
    assert key.encode() not in dump
    with pytest.raises(accounts.AccountError, match="already exists"):
        accounts.create_api_key(redis, "ci")


def test_vendor_libraries_are_served(client):
    for name in ["jquery.js", "underscore.js", "backbone.js", "socket.io.js"]:
        reply = client.get(f"/vendor/{name}")
        assert reply.status_code == 200 and len(reply.data) > 1000
        reply.close()
    assert client.get("/vendor/package.json").status_code == 404
