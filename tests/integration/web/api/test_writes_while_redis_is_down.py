"""A user's change while Redis is known to be unreachable is answered 503 at once
(issue 38, point 5), not after Redis's socket timeouts: the inbox showed a row read
for ~8 s, then put it back. Publishing is left as it was (it retries by itself)."""
import os
import signal
import time

import pytest
import requests

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.support import own_stack, wait_until


@pytest.fixture
def paused(tmp_path):
    """A web server whose redis-server is paused (SIGSTOP), with a token of ann's and
    one notification id; SIGCONT afterwards."""
    with own_stack(tmp_path) as (redis_server, client, server):
        accounts.create_user(client, "ann", "ann-password")
        subscriptions.add(client, "ann", ["ops"], limit=10)
        entry = Bus(client).publish("ops.x", "x")
        token = server.token("ann", "ann-password")
        os.kill(redis_server.process.pid, signal.SIGSTOP)
        try:
            yield server, {"Authorization": f"Bearer {token}"}, entry
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)


def quick(method, url, headers, body):
    """The answer if it came within a second, else None."""
    try:
        return requests.request(method, url, headers=headers, json=body, timeout=1)
    except requests.Timeout:
        return None


def test_user_writes_are_refused_at_once_naming_redis(paused):
    server, headers, entry = paused
    writes = [("POST", "/api/read-state", {"ids": [entry]}),
              ("POST", "/api/notification-state", {"archive": [entry]}),
              ("PUT", "/api/preferences", {}),
              ("POST", "/api/notification-state/matching", {"action": "read"})]
    # The process learns Redis is away within a few seconds (its watch PINGs every second).
    wait_until(lambda: quick("POST", server.url + writes[0][1], headers, writes[0][2]) is not None,
               timeout=20, interval=0.5, message="an answer within a second")
    for method, path, body in writes:
        started = time.monotonic()
        reply = quick(method, server.url + path, headers, body)
        assert reply is not None and time.monotonic() - started < 1, path
        assert reply.status_code == 503 and "Redis is unreachable" in reply.json()["error"], path
        assert reply.headers["Retry-After"] == "1"
