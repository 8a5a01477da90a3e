"""Connecting while Redis restarts: Redis answers ``LOADING`` until its data is
read back, and a connect in that time must wait for it, not be refused."""
import socket
import subprocess
import threading

import socketio

from app.users import accounts
from tests.support import NAMESPACE, LiveServer, RedisServer, wait_until

KEYS = 600_000  # enough data that Redis takes a noticeable time to load it back


def fill(redis_server):
    """Write KEYS keys through redis-cli --pipe (much faster than one by one)."""
    lines = "".join(f"*3\r\n$3\r\nSET\r\n${len(k)}\r\n{k}\r\n$8\r\nxxxxxxxx\r\n"
                    for k in (f"filler:{i}" for i in range(KEYS)))
    subprocess.run(["redis-cli", "-p", str(redis_server.port), "--pipe"], input=lines.encode(),
                   check=True, capture_output=True, timeout=120)


def answers_loading(redis_server):
    """True while Redis answers, but with LOADING (reading its data back): asked
    over a plain socket, which no client library retries."""
    try:
        with socket.create_connection(("127.0.0.1", redis_server.port), timeout=2) as probe:
            probe.sendall(b"PING\r\n")
            return probe.recv(64).startswith(b"-LOADING")
    except OSError:
        return False


def connect_all(server, token, count):
    """Connect ``count`` clients at once; the reasons of those refused."""
    refusals, lock = [], threading.Lock()

    def one():
        client = socketio.Client(reconnection=False)
        reasons = []
        client.on("connect_error", reasons.append, namespace=NAMESPACE)
        try:
            client.connect(server.url, namespaces=[NAMESPACE], auth={"token": token},
                           transports=["websocket"], wait_timeout=15)
        except socketio.exceptions.ConnectionError:
            with lock:
                refusals.append(reasons[0] if reasons else "no answer")
        finally:
            client.disconnect()
    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return refusals


def test_connects_while_redis_loads_its_data_wait_for_it(tmp_path):
    redis_server = RedisServer(tmp_path)
    redis_server.start()
    client = redis_server.client()
    server = LiveServer(redis_server.url, tmp_path)
    try:
        accounts.create_user(client, "ann", "ann-password")
        fill(redis_server)
        server.start()
        token = server.token("ann", "ann-password")
        redis_server.kill()
        redis_server.start(wait=False)
        wait_until(lambda: answers_loading(redis_server), timeout=10, message="Redis LOADING")
        refusals = connect_all(server, token, 40)
        assert refusals == []
        assert not answers_loading(redis_server)  # the connects did overlap the loading
    finally:
        server.stop()
        client.close()
        redis_server.stop()
