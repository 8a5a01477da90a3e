"""Sign-in pages, tokens, API keys and accounts."""
import pytest

from app.services import of as of_app
from app.users import accounts
from app.web.auth import tokens
from tests.support import sign_in


def test_token_for_good_credentials(client, user):
    reply = client.post("/auth/token", json={"username": user[0], "password": user[1]})
    assert reply.status_code == 200
    body = reply.get_json()
    assert body["expires_in"] == 3600
    name, key = tokens.verify("test-secret-key", body["token"], 3600)
    assert name == user[0]
    assert key == accounts.get_user(of_app(client.application).redis, name)["token_key"]


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
    token = tokens.issue("k", "ann", "key1")
    assert tokens.verify("k", token, 60) == ("ann", "key1")
    with pytest.raises(tokens.TokenError, match="expired"):
        tokens.verify("k", token, -1)
    with pytest.raises(tokens.TokenError, match="invalid"):
        tokens.verify("other-key", token, 60)
    with pytest.raises(tokens.TokenError, match="invalid"):
        tokens.verify("k", token[:-2] + "xx", 60)
    with pytest.raises(tokens.TokenError, match="missing"):
        tokens.verify("k", None, 60)


def test_a_token_is_bound_to_its_user_and_dies_with_revocation(client, redis, user):
    reply = client.post("/auth/token", json={"username": user[0], "password": user[1]})
    token = reply.get_json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/notifications", headers=headers).status_code == 200
    accounts.revoke_tokens(redis, user[0])
    refused = client.get("/api/notifications", headers=headers)
    assert refused.status_code == 401
    assert refused.get_json() == {"error": "token has been revoked"}
    # A user deleted and created again under the same name does not inherit old tokens.
    fresh = client.post("/auth/token", json={"username": user[0], "password": user[1]})
    old = {"Authorization": f"Bearer {fresh.get_json()['token']}"}
    redis.delete(accounts.user_key(user[0]))
    redis.srem(accounts.USERS, user[0])
    accounts.create_user(redis, user[0], user[1])
    assert client.get("/api/notifications", headers=old).status_code == 401


def test_a_forged_token_for_another_user_is_refused(client, redis, user, admin):
    # Signed with the right secret, but carrying the wrong user's key.
    forged = tokens.issue("test-secret-key", admin[0], accounts.get_user(redis, user[0])["token_key"])
    reply = client.get("/api/notifications", headers={"Authorization": f"Bearer {forged}"})
    assert reply.status_code == 401


def test_api_keys_are_listed_and_revoked(client, redis):
    key = accounts.create_api_key(redis, "etl")
    accounts.create_api_key(redis, "cron")
    listed = accounts.list_api_keys(redis)
    assert [k["name"] for k in listed] == ["cron", "etl"]
    assert all(isinstance(k["created"], int) for k in listed)
    envelope = {"topic": "etl.done", "title": "done"}
    headers = {"Authorization": f"Bearer {key}"}
    assert client.post("/api/notifications", json=envelope, headers=headers).status_code == 201
    accounts.revoke_api_key(redis, "etl")
    assert [k["name"] for k in accounts.list_api_keys(redis)] == ["cron"]
    refused = client.post("/api/notifications", json=envelope, headers=headers)
    assert refused.status_code == 401 and refused.get_json() == {"error": "API key is not valid"}
    with pytest.raises(accounts.AccountError, match="no API key 'etl'"):
        accounts.revoke_api_key(redis, "etl")


def test_dashboard_needs_sign_in(client):
    reply = client.get("/")
    assert reply.status_code == 302 and reply.headers["Location"].endswith("/login")


def test_sign_in_and_out(client, user):
    assert sign_in(client, user[0], "wrong-password").status_code == 401
    assert sign_in(client, *user).status_code == 302
    page = client.get("/").get_data(as_text=True)
    assert "<h1 id=\"feed-title\">Notifications</h1>" in page and user[0] in page
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
    ann = accounts.authenticate(redis, "ann", "long-enough")
    assert {k: ann[k] for k in ("name", "admin")} == {"name": "ann", "admin": False}
    assert len(ann["token_key"]) == 16
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
    for name in ["jquery.js", "underscore.js", "backbone.js"]:
        reply = client.get(f"/vendor/{name}")
        assert reply.status_code == 200 and len(reply.data) > 1000
        reply.close()
    assert client.get("/vendor/package.json").status_code == 404
