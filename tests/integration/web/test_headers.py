"""Which origins may open a Socket.IO connection, on a live server (the security headers
and session cookie flags: tests/unit/web/test_headers.py); a websocket upgrade for
another host, or from a refused origin, is refused before switching protocols."""
import json
import socket

import websocket

from app.web import hosts
from tests.support import LiveServer


def opens(server, origin, headers=None):
    """Whether Engine.IO opens a session on a websocket sent with this Origin (a refused
    origin's upgrade is answered 400: the test below)."""
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


def upgrade(server, host, *extra, path="/socket.io/?EIO=4&transport=websocket"):
    """The status line, headers and body the server answers to a websocket upgrade of
    ``path`` naming ``host``, sent on a raw socket."""
    request = "\r\n".join([
        f"GET {path} HTTP/1.1", f"Host: {host}",
        "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", *extra, "", ""])
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(request.encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines[1:])
        length = int(headers.get("Content-Length", 0))
        while len(body) < length:
            chunk = sock.recv(4096)
            if not chunk:
                break
            body += chunk
    return lines[0], headers, body


def test_a_websocket_upgrade_for_another_host_is_refused_before_switching(live_server):
    """ALLOWED_HOSTS: the documented 400 ({"error", "field": "Host"}), not 101 then a
    close (gevent-websocket switches protocols before the app is asked)."""
    status, headers, body = upgrade(live_server, "evil.example")
    assert status == "HTTP/1.1 400 Bad Request"
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"error": hosts.MESSAGE, "field": "Host"}
    assert upgrade(live_server, f"127.0.0.1:{live_server.port}")[0] == \
        "HTTP/1.1 101 Switching Protocols"


def test_a_websocket_upgrade_from_a_refused_origin_is_refused_before_switching(live_server):
    status, _headers, body = upgrade(live_server, f"127.0.0.1:{live_server.port}",
                                     "Origin: http://evil.example")
    assert status.startswith("HTTP/1.1 400 ") and b"origin" in body.lower()


def test_behind_a_trusted_proxy_the_upgrade_checks_the_forwarded_host(redis_server, redis,
                                                                      tmp_path):
    server = LiveServer(redis_server.url, tmp_path, TRUSTED_PROXIES="1")
    server.start()
    try:
        via = ["X-Forwarded-For: 192.0.2.9", "X-Forwarded-Proto: http"]
        assert upgrade(server, "localhost", "X-Forwarded-Host: evil.example", *via)[0] == \
            "HTTP/1.1 400 Bad Request"
        assert upgrade(server, "10.0.0.1", "X-Forwarded-Host: localhost", *via)[0] == \
            "HTTP/1.1 101 Switching Protocols"
    finally:
        server.stop()


def test_a_websocket_upgrade_elsewhere_than_socketio_is_answered_not_switched(live_server):
    """Only Socket.IO speaks websocket: Flask's routes answer an upgrade 400 (Werkzeug's
    routing), which went nowhere after a 101."""
    status, headers, body = upgrade(live_server, f"127.0.0.1:{live_server.port}",
                                    path="/api/stream")
    assert status.startswith("HTTP/1.1 400 ")
    assert headers["Content-Type"] == "application/json" and b"error" in body
