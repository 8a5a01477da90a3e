"""Which origins may open a Socket.IO connection, on a live server (the security headers
and session cookie flags: tests/unit/web/test_headers.py)."""
import websocket

from tests.support import LiveServer


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
