"""Every malformed bearer token is a 401 naming the reason, over REST, ``/api/stream``
and Socket.IO connect: never a 500, never a handler error, never a logged traceback.

Most of the tokens here are correctly signed with the configured secret, so that
what is refused is their shape, not their signature (which a forger cannot make).
"""
import base64
import hashlib
import hmac
import json
import logging
import time

import jwt
import pytest
import socketio

from app import create_app
from app.services import of as of_app
from app.settings import TestConfig
from tests.helpers.keys import SECRET


def _b64(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def signed(header, payload):
    """A JWT made of these exact header and payload bytes, HS256-signed with SECRET."""
    head = _b64(header if isinstance(header, bytes) else json.dumps(header).encode())
    body = _b64(payload if isinstance(payload, bytes) else json.dumps(payload).encode())
    mac = hmac.new(SECRET.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(mac)}"


def soon():
    return int(time.time()) + 600


HS = {"alg": "HS256", "typ": "JWT"}


def claims(**changed):
    """A signed token for alice, valid but for ``changed``."""
    return signed(HS, {"sub": "alice", "exp": soon(), **changed})
# (name, token maker, what the reason must say)
MALFORMED = [
    ("crit header", lambda: jwt.encode({"sub": "alice", "exp": soon()}, SECRET,
                                       headers={"crit": ["exp"]}), "crit"),
    ("crit not a list", lambda: signed({**HS, "crit": "x"}, {"sub": "alice", "exp": soon()}),
     "crit"),
    ("kid a number", lambda: signed({**HS, "kid": 5}, {"sub": "alice", "exp": soon()}), "token"),
    ("alg an object", lambda: signed({"alg": {"x": 1}}, {"sub": "alice", "exp": soon()}), "alg"),
    ("header not base64", lambda: "eyJhbGciOiJIUzI1NiJ9!!.eyJzdWIiOiJhIn0.c2ln", "token"),
    ("header not JSON", lambda: signed(b"{alg: HS256", {"sub": "alice", "exp": soon()}), "token"),
    ("payload not base64", lambda: "eyJhbGciOiJIUzI1NiJ9.not-base64!.x", "well-formed"),
    ("payload not JSON", lambda: signed(HS, b"{sub: alice"), "token"),
    ("payload a list", lambda: signed(HS, b"[1, 2]"), "token"),
    ("signature not base64", lambda: signed(HS, {"sub": "alice", "exp": soon()})[:-4] + "!!!!",
     "token"),
    ("exp a string", lambda: claims(exp="x"), "exp"),
    ("exp a float string", lambda: signed(HS, {"sub": "alice", "exp": "1e99"}), "exp"),
    ("exp huge", lambda: signed(HS, {"sub": "alice", "exp": 10**30}), "exp"),
    ("exp Infinity", lambda: signed(HS, b'{"sub": "alice", "exp": Infinity}'), "exp"),
    ("nbf NaN", lambda: signed(HS, b'{"sub": "alice", "exp": 9999999999, "nbf": NaN}'), "nbf"),
    ("iat a string", lambda: claims(iat="x"), "iat"),
    ("nbf a list", lambda: claims(nbf=[1]), "nbf"),
    ("sub a number", lambda: claims(sub=5), "token's 'sub' claim: must be a string"),
    ("sub empty", lambda: claims(sub=""), "token's 'sub' claim: must be a string of 1-255"),
    ("sub too long", lambda: claims(sub="x" * 256),
     "token's 'sub' claim: must be a string of 1-255"),
    ("sub a lone surrogate", lambda: signed(HS, b'{"sub": "\\ud800", "exp": %d}' % soon()),
     "token's 'sub' claim: must be valid Unicode"),
    ("sub null", lambda: signed(HS, {"sub": None, "exp": soon()}), "sub"),
    ("topics a string", lambda: claims(topics="board"), "topics"),
    ("topics of numbers", lambda: claims(topics=[5]), "topics"),
    ("aud a number", lambda: claims(aud=5), "'aud'"),
    ("iss a list", lambda: claims(iss=["x"]), "'iss'"),
]
IDS = [name for name, _make, _reason in MALFORMED]


@pytest.fixture(scope="module")
def jwt_app(redis_server):
    return create_app(TestConfig(redis_server.url, JWT_SECRET=SECRET))


@pytest.fixture
def http(jwt_app, redis):
    return jwt_app.test_client()


def no_tracebacks(caplog):
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not errors, [r.getMessage() for r in errors]


@pytest.mark.parametrize("make, reason", [m[1:] for m in MALFORMED], ids=IDS)
def test_rest_answers_401_naming_the_reason(http, caplog, make, reason):
    reply = http.get("/api/notifications", headers={"Authorization": f"Bearer {make()}"})
    assert reply.status_code == 401, reply.get_data(as_text=True)
    assert reason in reply.get_json()["error"]
    no_tracebacks(caplog)


@pytest.mark.parametrize("make, reason", [m[1:] for m in MALFORMED], ids=IDS)
def test_the_event_stream_answers_401_naming_the_reason(http, caplog, make, reason):
    reply = http.get("/api/stream", headers={"Authorization": f"Bearer {make()}"})
    if reply.status_code != 401:
        reply.close()  # an open stream: never read to its end
        pytest.fail(f"the stream answered {reply.status_code}")
    assert reason in reply.get_json()["error"]
    no_tracebacks(caplog)


@pytest.mark.parametrize("make, reason", [m[1:] for m in MALFORMED], ids=IDS)
def test_socketio_connect_is_refused_naming_the_reason(jwt_app, redis, caplog, make, reason):
    namespace = of_app(jwt_app).namespace
    try:
        with pytest.raises(socketio.exceptions.ConnectionRefusedError) as refused:
            namespace.on_connect("sid-1", {}, {"token": make()})
    finally:
        if "sid-1" in namespace.users:  # accepted: leave the namespace as it was
            namespace.on_disconnect("sid-1")
    message = refused.value.error_args["message"]
    assert message.startswith("unauthorized: ") and reason in message, message
    no_tracebacks(caplog)
