"""Signing keys and JWTs for tests of host-app tokens (made fresh, never committed)."""
import time

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

SECRET = "a-host-app-secret-of-at-least-32-bytes!"


def rsa_pair():
    return _pair(rsa.generate_private_key(public_exponent=65537, key_size=2048))


def ec_pair():
    return _pair(ec.generate_private_key(ec.SECP256R1()))


def _pair(private):
    """(private PEM text, public PEM bytes)."""
    private_pem = private.private_bytes(serialization.Encoding.PEM,
                                        serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()).decode()
    public_pem = private.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo)
    return private_pem, public_pem


def host_token(sub="carol", key=SECRET, algorithm="HS256", ttl=600, **claims):
    """A JWT as a host app mints it; ``ttl=None`` leaves out ``exp``."""
    now = int(time.time())
    body = {"sub": sub, "iat": now}
    if ttl is not None:
        body["exp"] = now + ttl
    body.update(claims)
    return jwt.encode(body, key, algorithm=algorithm)


def unsigned_token(sub="carol", ttl=600):
    """A JWT with ``alg: none`` (PyJWT mints one only with an empty key)."""
    return jwt.encode({"sub": sub, "exp": int(time.time()) + ttl}, None, algorithm="none")
