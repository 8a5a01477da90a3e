"""Admission control on a live server: limits on connections, deadlines for requests
and for joining the namespace, and health probes that are always answered."""
import json
import socket
import time

import pytest
import requests
import websocket

from tests.support import LiveServer, wait_until


def idle(server, count):
    """``count`` TCP connections that send nothing."""
    sockets = []
    for _ in range(count):
        sockets.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
    return sockets


def answer(sock):
    """What the server says on ``sock`` before it closes it (b"" when it just closes)."""
    chunks = []
    try:
        while data := sock.recv(4096):
            chunks.append(data)
    except OSError:
        pass
    return b"".join(chunks)


@pytest.fixture
def limited(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path, MAX_CONNECTIONS="30",
                        MAX_CONNECTIONS_PER_ADDRESS="0", REQUEST_TIMEOUT="20")
    server.start()
    yield server
    server.stop()


def test_past_the_limit_a_connection_is_refused_at_once_but_health_probes_are_answered(limited):
    held = idle(limited, 30)
    try:
        time.sleep(0.2)  # let the server take them in
        with socket.create_connection(("127.0.0.1", limited.port), timeout=5) as extra:
            refusal = answer(extra)
        assert refusal.startswith(b"HTTP/1.1 503")
        assert b"Retry-After: 5" in refusal and b"at its limit of 30 connections" in refusal
        health = requests.get(limited.url + "/healthz", timeout=5)
        assert health.status_code == 200 and health.json()["status"] == "ok"
        metrics = requests.get(limited.url + "/metrics", timeout=5).text
        assert [line for line in metrics.splitlines() if line.startswith("herald_connections_refused")]
    finally:
        for sock in held:
            sock.close()
    wait_until(lambda: requests.get(limited.url + "/login", timeout=5).status_code == 200,
               message="served again once they closed")


def test_connections_per_address_are_capped(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path, MAX_CONNECTIONS_PER_ADDRESS="5",
                        REQUEST_TIMEOUT="20")
    server.start()
    held = []
    try:
        wait_until(lambda: requests.get(server.url + "/healthz", timeout=5).ok, message="up")
        held = idle(server, 5)
        time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as extra:
            refusal = answer(extra)
        assert b"503" in refusal.split(b"\r\n", 1)[0]
        assert b"too many connections from 127.0.0.1 (at most 5)" in refusal
    finally:
        for sock in held:
            sock.close()
        server.stop()


def test_a_half_sent_request_and_a_silent_connection_are_closed(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path, REQUEST_TIMEOUT="1")
    server.start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as half, \
                socket.create_connection(("127.0.0.1", server.port), timeout=10) as silent:
            half.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never the blank line
            started = time.monotonic()
            # Closed by the server (a half-sent request may get a 400 first), long
            # before this socket's own 10 s timeout would have ended the wait.
            assert not answer(half).startswith(b"HTTP/1.1 200")
            assert answer(silent) == b""
            assert time.monotonic() - started < 9
    finally:
        server.stop()


def test_a_websocket_that_never_joins_the_namespace_is_closed(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path, JOIN_TIMEOUT="1")
    server.start()
    try:
        ws = websocket.create_connection(server.url.replace("http", "ws")
                                         + "/socket.io/?EIO=4&transport=websocket", timeout=10)
        try:
            assert json.loads(ws.recv()[1:])["sid"]
            while ws.recv():  # nothing but the close is coming (or pings, answered or not)
                pass
        except (websocket.WebSocketException, OSError):
            pass
        finally:
            ws.shutdown()
        assert "it did not join /notifications within 1 s" in server.log_path.read_text()
    finally:
        server.stop()
