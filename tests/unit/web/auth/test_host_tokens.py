"""Host-app tokens (JWTs) checked by app.web.auth.host_tokens: each refusal names its reason."""
import base64
import hashlib
import hmac
import json
import re
from pathlib import Path

import jwt
import pytest

from app.web.auth.host_tokens import ConfigError, HostTokens, looks_like_jwt
from app.web.auth.tokens import TokenError, issue
from tests.helpers.keys import SECRET, ec_pair, host_token, rsa_pair, unsigned_token


@pytest.fixture(scope="module")
def rsa_keys(tmp_path_factory):
    private, public = rsa_pair()
    path = tmp_path_factory.mktemp("keys") / "rsa.pem"
    path.write_bytes(public)
    return private, str(path)


@pytest.fixture(scope="module")
def ec_keys(tmp_path_factory):
    private, public = ec_pair()
    path = tmp_path_factory.mktemp("keys") / "ec.pem"
    path.write_bytes(public)
    return private, str(path)


def test_hs256_rs256_and_es256_tokens_are_accepted(rsa_keys, ec_keys):
    assert HostTokens(SECRET).verify(host_token("carol"))[:2] == ("carol", None)
    assert HostTokens(public_key_path=rsa_keys[1]).verify(
        host_token("dan", rsa_keys[0], "RS256"))[:2] == ("dan", None)
    assert HostTokens(public_key_path=ec_keys[1]).verify(
        host_token("eve", ec_keys[0], "ES256"))[:2] == ("eve", None)


def test_a_topics_claim_is_the_connections_limit():
    user = HostTokens(SECRET).verify(host_token(topics=["board", "board", "ops.deploy"]))
    assert user.topics == ["board", "ops.deploy"]


@pytest.mark.parametrize("token, reason", [
    (lambda: host_token(ttl=-60), "token has expired"),
    (lambda: host_token(key="another-secret-that-is-32-bytes-long"),
     "token signature does not match the HS256 key"),
    (lambda: unsigned_token(), "unsigned (alg 'none')"),
    (lambda: host_token(ttl=None), "token has no 'exp' claim"),
    (lambda: jwt.encode({"exp": 9999999999}, SECRET),
     "token has no 'sub' claim"),
    (lambda: host_token(topics="board"), "token's 'topics' claim: must be a list"),
    (lambda: host_token(topics=["Board!"]), "token's 'topics' claim[0]"),
    (lambda: host_token(nbf=9999999999), "not valid yet"),
    (lambda: "eyJhbGciOiJIUzI1NiJ9.not-base64!.x", "not a well-formed JWT"),
])
def test_bad_tokens_are_refused_with_their_reason(token, reason):
    with pytest.raises(TokenError, match=re.escape(reason)):
        HostTokens(SECRET).verify(token())


# A host app's user ids (docs/contract.md, "Tokens from the host app"): any string.
SUBS = ["42", "user:42", "alice@example.com", "Zo\u00eb M\u00fcller", "x" * 255,
        "550e8400-e29b-41d4-a716-446655440000", "not a valid name!", "a\nb", "\U0001f600" * 255]


@pytest.mark.parametrize("sub", SUBS)
def test_sub_is_any_string_of_1_to_255_characters(sub):
    assert HostTokens(SECRET).verify(host_token(sub)).name == sub


@pytest.mark.parametrize("sub, words", [
    ("", "1-255 characters"),
    ("x" * 256, "1-255 characters"),
    ("\ud800", "valid Unicode"),
    (5, "must be a string"),
    (["carol"], "must be a string"),
    ({"id": 5}, "must be a string"),
])
def test_a_bad_sub_is_refused_naming_the_claim(sub, words):
    with pytest.raises(TokenError) as caught:
        HostTokens(SECRET).verify(host_token(sub))
    assert str(caught.value).startswith("token's 'sub' claim: ") and words in str(caught.value)


def test_an_algorithm_not_configured_is_refused(rsa_keys):
    token = host_token("dan", rsa_keys[0], "RS256")
    with pytest.raises(TokenError, match=r"signed with RS256, which is not accepted here; "
                                         r"accepted: HS256 \(JWT_SECRET\)"):
        HostTokens(SECRET).verify(token)
    hs512 = jwt.encode({"sub": "x", "exp": 9999999999}, SECRET * 2, algorithm="HS512")
    with pytest.raises(TokenError, match="signed with HS512"):
        HostTokens(SECRET).verify(hs512)


def test_the_public_key_cannot_be_used_as_an_hmac_secret(rsa_keys):
    """Algorithm confusion: an HS256 token 'signed' with the RSA public key is refused,
    whether or not HS256 is configured too."""
    public = Path(rsa_keys[1]).read_text()
    header = base64.urlsafe_b64encode(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = base64.urlsafe_b64encode(json.dumps({"sub": "mallory", "exp": 9999999999}).encode())
    signing_input = header.rstrip(b"=") + b"." + body.rstrip(b"=")
    signature = base64.urlsafe_b64encode(
        hmac.new(public.encode(), signing_input, hashlib.sha256).digest()).rstrip(b"=")
    forged = (signing_input + b"." + signature).decode()
    with pytest.raises(TokenError, match="signed with HS256, which is not accepted"):
        HostTokens(public_key_path=rsa_keys[1]).verify(forged)
    with pytest.raises(TokenError, match="signature does not match"):
        HostTokens(SECRET, rsa_keys[1]).verify(forged)


def test_audience_and_issuer_are_checked_when_configured():
    tokens = HostTokens(SECRET, audience="herald", issuer="https://board.example")
    good = host_token(aud="herald", iss="https://board.example")
    assert tokens.verify(good).name == "carol"
    with pytest.raises(TokenError, match="audience is not 'herald'"):
        tokens.verify(host_token(aud="someone-else", iss="https://board.example"))
    with pytest.raises(TokenError, match="token has no 'aud' claim; Herald wants 'herald'"):
        tokens.verify(host_token(iss="https://board.example"))
    with pytest.raises(TokenError, match="issuer is not"):
        tokens.verify(host_token(aud="herald", iss="https://evil.example"))
    # Not configured: an aud in the token is not Herald's business.
    assert HostTokens(SECRET).verify(host_token(aud="anything")).name == "carol"


def test_jwts_are_refused_when_not_enabled():
    with pytest.raises(TokenError, match="host-app tokens are not enabled here"):
        HostTokens().verify(host_token())


def test_heralds_own_tokens_do_not_look_like_jwts():
    assert looks_like_jwt(host_token())
    assert not looks_like_jwt(issue("secret", "ann", "key"))
    assert not looks_like_jwt("garbage")


@pytest.mark.parametrize("settings, message", [
    ({"secret": "short"}, "JWT_SECRET: must be at least 32 bytes"),
    ({"public_key_path": "/nonexistent/key.pem"}, "JWT_PUBLIC_KEY: cannot read"),
])
def test_unusable_settings_say_which(settings, message):
    with pytest.raises(ConfigError, match=message):
        HostTokens(**settings)


def test_a_file_that_is_not_a_public_key_is_refused(tmp_path):
    path = tmp_path / "key.pem"
    path.write_text("not a key")
    with pytest.raises(ConfigError, match="is not a PEM public key"):
        HostTokens(public_key_path=str(path))


def test_a_token_living_longer_than_jwt_max_ttl_is_refused():
    tokens = HostTokens(SECRET, max_ttl=3600, leeway=5)
    assert tokens.verify(host_token("carol", ttl=3600)).name == "carol"
    with pytest.raises(TokenError, match=r"'exp' is \d+ s away, more than the 3600 s .*JWT_MAX_TTL"):
        tokens.verify(host_token("carol", ttl=3600 + 60))


def test_the_expiry_herald_keeps_is_exp_plus_the_leeway():
    token = host_token("carol", ttl=600)
    exp = jwt.decode(token, options={"verify_signature": False})["exp"]
    assert HostTokens(SECRET, leeway=5).verify(token).expires == exp + 5


def test_accepting_jwts_without_audience_or_issuer_warns_at_start(caplog):
    from app.services import host_tokens as from_config
    config = {"JWT_SECRET": SECRET, "JWT_PUBLIC_KEY": "", "JWT_AUDIENCE": "herald",
              "JWT_ISSUER": "", "JWT_LEEWAY": 5, "JWT_MAX_TTL": 86400}
    with caplog.at_level("WARNING", logger="herald.services"):
        from_config(config)
        from_config({**config, "JWT_ISSUER": "the-host-app"})
        from_config({**config, "JWT_SECRET": "", "JWT_AUDIENCE": ""})  # JWTs off: no warning
    warnings = [r.getMessage() for r in caplog.records if r.name == "herald.services"]
    assert len(warnings) == 1 and "without checking JWT_ISSUER" in warnings[0], warnings
