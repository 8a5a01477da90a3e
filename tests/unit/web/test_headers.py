"""Security headers and session cookie flags (which origins may open a Socket.IO connection,
on a live server: tests/integration/web/test_headers.py)."""
import re

import pytest

from app import create_app
from app.settings import TestConfig
from app.web.security import CONTENT_SECURITY_POLICY
from tests.support import sign_in


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
