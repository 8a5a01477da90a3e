"""Connection tokens for your users: short-lived JWTs that Herald accepts.

    signer = TokenSigner(os.environ["HERALD_JWT_SECRET"])
    token = signer.token("alice", ttl=600, topics=["board"])

Herald checks them with the same secret (its ``JWT_SECRET``, HS256) or with
the public half of ``key`` (its ``JWT_PUBLIC_KEY``: RS256 for an RSA key,
ES256 for a P-256 one). ``sub`` is the user (private notifications address
it), ``exp`` when it stops working, ``topics`` (optional) the only topic
prefixes the connection may subscribe to.
"""
import time

import jwt

from .envelope import MAX_USER_CHARS, user_id


def _algorithm_for(key):
    """HS256 for a shared secret; RS256 or ES256 for a PEM private key, by its type."""
    if "-----BEGIN" not in key:
        return "HS256"
    try:
        from cryptography.hazmat.primitives.asymmetric import ec, rsa
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
    except ImportError:
        raise ValueError("key: a PEM key needs the cryptography package "
                         "(pip install 'herald-client[rsa]')") from None
    private = load_pem_private_key(key.encode(), password=None)
    if isinstance(private, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(private, ec.EllipticCurvePrivateKey):
        return "ES256"
    raise ValueError("key: must be an RSA or EC private key, or a shared secret")


class TokenSigner:
    """Mints connection tokens with one key.

    ``key``: a shared secret (HS256, at least 32 bytes) or a PEM private key
    (RS256 for RSA, ES256 for EC P-256); ``algorithm`` only to insist on one.
    ``audience``/``issuer``:
    set them when Herald checks them (``JWT_AUDIENCE``/``JWT_ISSUER``).
    """

    def __init__(self, key, algorithm=None, audience=None, issuer=None):
        if isinstance(key, bytes):
            key = key.decode()
        algorithm = algorithm or _algorithm_for(key)
        if algorithm not in ("HS256", "RS256", "ES256"):
            raise ValueError("algorithm: must be HS256, RS256 or ES256")
        if algorithm == "HS256" and len(key.encode()) < 32:
            raise ValueError("key: an HS256 secret must be at least 32 bytes")
        self.key = key
        self.algorithm = algorithm
        self.audience = audience
        self.issuer = issuer

    def token(self, user, ttl=600, topics=None):
        """A token for ``user`` (the user's stable id: an int primary key becomes its
        digits) valid ``ttl`` seconds (and limited to ``topics``)."""
        user = user_id(user)
        if not isinstance(user, str) or not 1 <= len(user) <= MAX_USER_CHARS:
            raise ValueError(f"user: must be a user id, a string of 1-{MAX_USER_CHARS} "
                             "characters (or an int primary key)")
        now = int(time.time())
        claims = {"sub": user, "iat": now, "exp": now + int(ttl)}
        if topics is not None:
            claims["topics"] = list(topics)
        if self.audience:
            claims["aud"] = self.audience
        if self.issuer:
            claims["iss"] = self.issuer
        return jwt.encode(claims, self.key, algorithm=self.algorithm)
