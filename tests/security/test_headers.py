"""Security headers, session cookie flags, and which origins may open a Socket.IO connection."""
import re

import pytest
import websocket

from app import create_app
from app.settings import TestConfig
from app.web.security import CONTENT_SECURITY_POLICY
from tests.support import LiveServer, sign_in


@pytest.mark.parametrize("path", ["/login", "/healthz", "/api/notifications", "/static/css/herald.css"])
def test_every_response_carries_the_security_headers(client, path):
    reply = client.get(path)
    reply.close()  # a static file's response holds the file open
    assert reply.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert reply.headers["X-Frame-Options"] == "DENY"
    assert reply.headers["Referrer-Policy"] == "same-origin"
    assert "Strict-Transport-Security" not in reply.headers  # plain HTTP on loopback


def test_the_policy_allows_no_inline_script_style_or_eval():
    directives = dict(d.split(" ", 1) for d in CONTENT_SECURITY_POLICY.split("; "))
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in CONTENT_SECURITY_POLICY


def test_pages_have_no_inline_script_or_style(client, user):
    sign_in(client, *user)
    for path in ("/", "/jobs", "/login"):
        page = client.get(path).get_data(as_text=True)
        for tag in re.findall(r"<script[^>]*>", page):
            assert "src=" in tag or 'type="application/json"' in tag, tag
        assert " style=" not in page and "<style" not in page
        assert not re.search(r"\son[a-z]+=", page), "inline event handler"


def test_session_cookie_flags(redis_server, redis, user):
    client = create_app(TestConfig(redis_server.url)).test_client()
    cookie = sign_in(client, *user).headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    secure = create_app(TestConfig(redis_server.url, SESSION_COOKIE_SECURE=True)).test_client()
    reply = sign_in(secure, *user)
    assert "Secure" in reply.headers["Set-Cookie"]


def test_session_cookie_is_secure_by_default_off_loopback(monkeypatch, redis_server):
    monkeypatch.setenv("HOST", "0.0.0.0")
    monkeypatch.delenv("SESSION_COOKIE_SECURE", raising=False)
    app = create_app(TestConfig(redis_server.url))
    assert app.config["SESSION_COOKIE_SECURE"] is True
    assert "Strict-Transport-Security" in app.test_client().get("/login").headers


def opens(server, origin, headers=None):
    """Whether Engine.IO opens a session on a websocket sent with this Origin.

    gevent-websocket completes the websocket handshake before the app runs,
    so a refused origin shows as a socket closed without the open packet.
    """
    url = server.url.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket"
    ws = websocket.WebSocket()
    try:
        ws.connect(url, origin=origin, timeout=5, header=headers or [])
        return ws.recv().startswith("0{")
    except websocket.WebSocketException:
        return False
    finally:
        ws.close()
        ws.shutdown()  # close() leaves the socket open once the peer has closed


def test_socketio_accepts_its_own_origin_only_by_default(live_server):
    assert opens(live_server, live_server.url)
    assert not opens(live_server, "http://evil.example")


def test_socketio_origins_come_from_config(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path, SOCKETIO_ORIGINS="https://app.example.com")
    server.start()
    try:
        assert opens(server, "https://app.example.com")
        assert not opens(server, "http://evil.example")
        # The list adds to Herald's own origin: its dashboard keeps working.
        assert opens(server, server.url)
    finally:
        server.stop()


def test_forwarded_headers_do_not_make_an_origin_herald_s_own_unless_trusted(live_server):
    """Engine.IO on its own takes X-Forwarded-Host at its word; Herald believes
    it only from TRUSTED_PROXIES (through ProxyFix)."""
    spoof = ["X-Forwarded-Host: evil.example", "X-Forwarded-Proto: http"]
    assert not opens(live_server, "http://evil.example", spoof)
