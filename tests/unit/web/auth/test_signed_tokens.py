"""A token's signature is checked once per process (tokens.py, ``signed``).

herald.js presents the same token at every reconnect; checking its signature
and decoding its payload again was a tenth of a reconnect's CPU. What is
remembered is only that the signature holds: the token's age is checked at
every use, its key against the user's at every use (bearer.py), and what was
refused is never remembered.
"""
import pytest

from app.users import accounts
from app.web.auth import bearer, tokens

SECRET = "test-secret"


@pytest.fixture
def checks(monkeypatch):
    """The signature checks made (each a call of itsdangerous's ``loads``), counted
    from an empty memory of signed tokens."""
    monkeypatch.setattr(tokens, "_signed", {})
    made = []
    real = tokens._serializer

    class Counting:
        def __init__(self, secret):
            self.serializer = real(secret)

        def loads(self, token, **kwargs):
            made.append(token)
            return self.serializer.loads(token, **kwargs)

        def dumps(self, payload):
            return self.serializer.dumps(payload)

    monkeypatch.setattr(tokens, "_serializer", Counting)
    return made


def test_a_token_checked_once_is_not_checked_again(checks):
    token = tokens.issue(SECRET, "ann", "key1")
    assert tokens.verify(SECRET, token, 60) == ("ann", "key1")
    assert tokens.verify(SECRET, token, 60) == ("ann", "key1")
    assert checks == [token]


def test_a_remembered_token_still_expires(checks, monkeypatch):
    token = tokens.issue(SECRET, "ann", "key1")
    name, key, expires = tokens.verify_with_expiry(SECRET, token, 60)
    now = tokens.time.time()
    monkeypatch.setattr(tokens.time, "time", lambda: now + 61)
    with pytest.raises(tokens.TokenError, match="token has expired"):
        tokens.verify_with_expiry(SECRET, token, 60)
    monkeypatch.setattr(tokens.time, "time", lambda: now - 3600)  # the clock went back
    with pytest.raises(tokens.TokenError, match="token has expired"):
        tokens.verify_with_expiry(SECRET, token, 60)
    assert checks == [token] and expires - now <= 60


def test_a_refused_token_is_checked_every_time_it_comes(checks):
    forged = tokens.issue("another-secret", "ann", "key1")
    for _ in range(2):
        with pytest.raises(tokens.TokenError, match="token is invalid"):
            tokens.verify(SECRET, forged, 60)
    assert checks == [forged, forged] and tokens._signed == {}


def test_a_token_signed_with_another_secret_is_not_taken_for_one_checked(checks):
    token = tokens.issue(SECRET, "ann", "key1")
    tokens.verify(SECRET, token, 60)
    with pytest.raises(tokens.TokenError, match="token is invalid"):
        tokens.verify("rotated-secret", token, 60)


def test_it_remembers_a_bounded_number_the_oldest_let_go_first(checks, monkeypatch):
    monkeypatch.setattr(tokens, "SIGNED_KEEP", 3)
    issued = [tokens.issue(SECRET, f"user{i}", "k") for i in range(5)]
    for token in issued:
        tokens.verify(SECRET, token, 60)
    assert [token for _secret, token in tokens._signed] == issued[2:]
    tokens.verify(SECRET, issued[0], 60)  # let go: checked again
    assert checks == issued + [issued[0]]


def test_a_remembered_token_is_still_compared_with_its_users_key(checks, redis, user):
    """bearer.py reads the user at every use: a revoked token is refused though its
    signature is remembered."""
    name = user[0]
    verifier = bearer.TokenVerifier(redis, SECRET, 60, host=None)
    token = tokens.issue(SECRET, name, accounts.get_user(redis, name)["token_key"])
    assert verifier.verify(token).name == name
    accounts.revoke_tokens(redis, name)
    with pytest.raises(tokens.TokenError, match="token has been revoked"):
        verifier.verify(token)
    assert checks == [token]
