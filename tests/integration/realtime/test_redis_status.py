"""``status`` on /notifications: every connected client hears, once, when its web
process loses Redis and when it has it back; paused (nothing answers, the
connections stay open: the relay's subscription alone never notices) and
killed. Pages and the API answer 503 meanwhile, never a 500."""
import os
import signal

import requests

from app.users import accounts
from tests.support import NAMESPACE, Listener, own_stack, wait_until


def listen(server, token):
    listener = Listener(server, token)
    listener.statuses = []
    listener.sio.on("status", listener.statuses.append, namespace=NAMESPACE)
    return listener


def kinds(listener):
    return [status["redis"] for status in listener.statuses]


def test_every_client_hears_once_when_redis_is_paused_and_once_when_it_is_back(tmp_path):
    with own_stack(tmp_path) as (redis_server, client, server):
        accounts.create_user(client, "ann", "ann-password")
        hears_paused_then_back(redis_server, server)


def hears_paused_then_back(redis_server, server):
    listeners = []
    try:
        token = server.token("ann", "ann-password")
        listeners = [listen(server, token) for _ in range(3)]
        os.kill(redis_server.process.pid, signal.SIGSTOP)
        try:
            for listener in listeners:
                wait_until(lambda: kinds(listener) == ["down"], timeout=15, message="status down")
            # Known down: the API says 503 at once instead of waiting on Redis.
            reply = requests.get(server.url + "/api/notifications", timeout=10,
                                 headers={"Authorization": f"Bearer {token}"})
            assert reply.status_code == 503
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)
        for listener in listeners:
            wait_until(lambda: kinds(listener) == ["down", "up"], timeout=15, message="status up")
        down, up = listeners[0].statuses
        assert isinstance(down["since"], int) and up["since"] >= down["since"]
        assert all(listener.sio.connected for listener in listeners), "the sockets stayed up"
    finally:
        for listener in listeners:
            listener.close()


def test_a_killed_redis_is_down_and_up_again_once_restarted(tmp_path):
    with own_stack(tmp_path) as (redis_server, client, server):
        accounts.create_user(client, "ann", "ann-password")
        hears_killed_then_restarted(redis_server, server)


def hears_killed_then_restarted(redis_server, server):
    listener = None
    try:
        listener = listen(server, server.token("ann", "ann-password"))
        redis_server.kill()
        wait_until(lambda: kinds(listener) == ["down"], timeout=15, message="status down")
        redis_server.start()
        wait_until(lambda: kinds(listener) == ["down", "up"], timeout=15, message="status up")
        log = server.log_path.read_text()
        assert "Redis is unreachable from this process" in log and "Traceback" not in log
    finally:
        if listener:
            listener.close()
