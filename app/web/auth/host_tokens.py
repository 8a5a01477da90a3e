"""Connection tokens minted by the host app: JWTs, checked with PyJWT.

A Flask app that adopts Herald keeps its own users. It signs a short-lived
JWT for the signed-in user and hands it to the page; Herald accepts it
wherever it accepts one of its own tokens. Claims:

- ``sub``: the user: the host app's own, stable id of them (any string of
  1-255 characters, e.g. its primary key; never a name the user may change),
  which private notifications address (``user``);
- ``exp``: required, a token without it is refused, and so is one whose
  ``exp`` is more than ``JWT_MAX_TTL`` seconds away; a connection or event
  stream opened with the token ends when it expires;
- ``aud`` / ``iss``: checked when ``JWT_AUDIENCE`` / ``JWT_ISSUER`` are set;
- ``topics``: optional, the only topic prefixes this connection may
  subscribe to and read (a capability token).

Keys: ``JWT_SECRET`` for HS256, ``JWT_PUBLIC_KEY`` (a PEM file) for RS256
or ES256, by the key's type. The algorithm a token names must be one of
those configured, and each is checked with its own key only, so an RS256
public key can never be used as an HS256 secret (the classic algorithm
confusion), and ``alg: none`` never passes.
"""
import json
import time
from pathlib import Path
from typing import NamedTuple

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from jwt.utils import base64url_decode

from app.stream.envelope import USER_ID_RULE, EnvelopeError, check_topic_list, check_user_id
from app.web.auth.tokens import TokenError

MIN_SECRET_BYTES = 32  # RFC 7518 3.2: an HS256 key of at least 256 bits
MAX_TOPICS = 100


class HostUser(NamedTuple):
    """Who a host-app token speaks for, the prefixes it is limited to (None: any),
    and when Herald stops accepting it (its ``exp`` plus JWT_LEEWAY, UNIX seconds)."""

    name: str
    topics: list | None
    expires: float | None = None


class ConfigError(ValueError):
    """The JWT settings are unusable; the message names the setting."""


def looks_like_jwt(token):
    """True when ``token`` is shaped like a JWT: its first part is a JSON object
    naming ``alg``. Only that part is looked at, so a JWT whose payload or
    header fields are bad is still checked as a JWT, and refused with its reason.

    Herald's own tokens (itsdangerous) also have three dot-separated parts,
    but their first part carries no ``alg``.
    """
    head = token.split(".", 1)[0] if isinstance(token, str) else ""
    try:
        header = json.loads(base64url_decode(head.encode("ascii")))
    except ValueError:  # not ASCII, not base64, not JSON (binascii.Error is one)
        return False
    return isinstance(header, dict) and "alg" in header


def _load_public_key(path):
    """``(algorithm, key)`` for the PEM public key at ``path``."""
    try:
        pem = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"JWT_PUBLIC_KEY: cannot read {path}: {exc.strerror}") from None
    try:
        key = load_pem_public_key(pem)
    except ValueError:
        raise ConfigError(f"JWT_PUBLIC_KEY: {path} is not a PEM public key") from None
    if isinstance(key, rsa.RSAPublicKey):
        if key.key_size < 2048:
            raise ConfigError(f"JWT_PUBLIC_KEY: an RSA key must have at least 2048 bits, "
                              f"not {key.key_size}")
        return "RS256", key
    if isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1):
        return "ES256", key
    raise ConfigError("JWT_PUBLIC_KEY: must be an RSA key (RS256) or a P-256 EC key (ES256)")


class HostTokens:
    """Verifies host-app JWTs against the configured keys.

        tokens = HostTokens(secret="…32 bytes or more…", audience="herald")
        user = tokens.verify(token)   # HostUser, or TokenError with the reason
    """

    def __init__(self, secret="", public_key_path="", audience="", issuer="", leeway=0,
                 max_ttl=86400):
        self.keys = {}  # algorithm -> the one key that checks it
        if secret:
            if len(secret.encode()) < MIN_SECRET_BYTES:
                raise ConfigError(f"JWT_SECRET: must be at least {MIN_SECRET_BYTES} bytes "
                                  "(HS256 wants a 256-bit key)")
            self.keys["HS256"] = secret
        if public_key_path:
            algorithm, key = _load_public_key(public_key_path)
            self.keys[algorithm] = key
        self.audience = audience or None
        self.issuer = issuer or None
        self.leeway = leeway
        self.max_ttl = max_ttl  # seconds: an 'exp' further away is refused (JWT_MAX_TTL)

    @property
    def enabled(self):
        return bool(self.keys)

    def _configured(self):
        sources = {"HS256": "JWT_SECRET"}
        return ", ".join(f"{alg} ({sources.get(alg, 'JWT_PUBLIC_KEY')})" for alg in self.keys)

    def verify(self, token):
        """The :class:`HostUser` of a valid token; raises TokenError saying why not."""
        if not self.enabled:
            raise TokenError("token is a JWT, but host-app tokens are not enabled here "
                             "(set JWT_SECRET or JWT_PUBLIC_KEY)")
        try:
            algorithm = jwt.get_unverified_header(token).get("alg")
        except jwt.PyJWTError as exc:  # bad base64 or JSON, a 'crit' or 'kid' refused...
            raise TokenError(f"token is not a well-formed JWT: {exc}") from None
        if not isinstance(algorithm, str):
            raise TokenError("token's 'alg' header must be a string naming the algorithm")
        if algorithm.lower() == "none":
            raise TokenError("token is unsigned (alg 'none'), which is never accepted")
        key = self.keys.get(algorithm)
        if key is None:
            raise TokenError(f"token is signed with {algorithm[:20]}, which is not accepted "
                             f"here; accepted: {self._configured()}")
        try:
            claims = jwt.decode(
                token, key, algorithms=[algorithm], audience=self.audience, issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "sub"], "verify_aud": self.audience is not None})
        except jwt.ExpiredSignatureError:
            raise TokenError("token has expired") from None
        except jwt.MissingRequiredClaimError as exc:
            wanted = {"aud": f"{self.audience!r} (JWT_AUDIENCE)",
                      "iss": f"{self.issuer!r} (JWT_ISSUER)"}.get(exc.claim)
            raise TokenError(f"token has no '{exc.claim}' claim; " + (
                f"Herald wants {wanted}" if wanted else
                "host-app tokens must carry 'sub' and 'exp'")) from None
        except jwt.InvalidSignatureError:
            raise TokenError(f"token signature does not match the {algorithm} key "
                             "configured here") from None
        except jwt.InvalidAudienceError:
            raise TokenError(f"token audience is not {self.audience!r} (JWT_AUDIENCE)") from None
        except jwt.InvalidIssuerError:
            raise TokenError(f"token issuer is not {self.issuer!r} (JWT_ISSUER)") from None
        except jwt.exceptions.InvalidSubjectError:  # PyJWT's own check: 'sub' is not a string
            raise TokenError(f"token's 'sub' claim: {USER_ID_RULE}") from None
        except jwt.ImmatureSignatureError:
            raise TokenError("token is not valid yet (its 'nbf' or 'iat' is in the future)") from None
        except (jwt.PyJWTError, ValueError, TypeError) as exc:  # every other refusal, named
            raise TokenError(f"token is invalid: {exc}") from None
        _check_types(claims)
        self._check_lifetime(claims["exp"])
        return HostUser(_subject(claims), _topics(claims), claims["exp"] + self.leeway)

    def _check_lifetime(self, exp):
        """Refuse a token that lives longer than JWT_MAX_TTL from now: a leaked
        token must not be good for a year, whatever its minter chose."""
        away = exp - time.time()
        if away > self.max_ttl + self.leeway:
            raise TokenError(f"token's 'exp' is {int(away)} s away, more than the "
                             f"{self.max_ttl} s Herald accepts (JWT_MAX_TTL)")


def _check_types(claims):
    """Claims Herald does not check when unconfigured must still be what the JWT
    standard says (RFC 7519 4.1): a token whose ``iss`` or ``aud`` is of the
    wrong type is malformed, whether or not JWT_ISSUER / JWT_AUDIENCE are set."""
    if "iss" in claims and not isinstance(claims["iss"], str):
        raise TokenError("token's 'iss' claim must be a string")
    aud = claims.get("aud", "")
    if not isinstance(aud, str) and not (
            isinstance(aud, list) and all(isinstance(a, str) for a in aud)):
        raise TokenError("token's 'aud' claim must be a string or a list of strings")


def _subject(claims):
    """The user the token speaks for: its ``sub``, a user id (envelope.check_user_id)."""
    try:
        return check_user_id(claims["sub"], "token's 'sub' claim")
    except EnvelopeError as exc:
        raise TokenError(str(exc)) from None


def _topics(claims):
    if "topics" not in claims:
        return None
    try:
        return check_topic_list(claims["topics"], most=MAX_TOPICS, field="token's 'topics' claim")
    except EnvelopeError as exc:
        raise TokenError(str(exc)) from None
