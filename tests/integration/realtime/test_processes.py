"""Several web processes on one Redis: every client gets every notification
exactly once, whichever process it is connected to.

Each web process has its own Redis subscription and relays to its own
clients; nothing is forwarded between processes, so a notification reaching
a client twice or not at all would show here.
"""
import requests

from app.stream.publish import Bus
from app.users import accounts, read_state, subscriptions
from tests.support import Listener, LiveServer, free_port, wait_until

USER = ("ann", "ann-password")


def published(bus, count, user=None):
    return [bus.publish(f"news.item{n % 3}", f"item {n}", user=user) for n in range(count)]


def settle(listeners, expected):
    for listener in listeners:
        wait_until(lambda: len(listener.ids()) >= len(expected), timeout=20,
                   message=f"{len(expected)} notifications")


def test_a_client_on_each_of_two_processes_gets_every_notification_once(redis_server, redis,
                                                                          tmp_path):
    accounts.create_user(redis, *USER)
    subscriptions.add(redis, "ann", ["news"], limit=100)
    servers = [LiveServer(redis_server.url, tmp_path) for _ in range(2)]
    listeners = []
    try:
        for server in servers:
            server.start()
        listeners = [Listener(server, server.token(*USER)) for server in servers]
        bus = Bus(redis)
        ids = published(bus, 150)
        ids += published(bus, 10, user="ann")  # private ones too
        settle(listeners, ids)
        for listener in listeners:
            assert listener.ids() == ids
        # A read in one process's client reaches the other's, through Redis.
        listeners[0].call("read", {"ids": ids[:3]})
        wait_until(lambda: listeners[1].reads, timeout=10, message="read event in the other process")
        assert read_state.get(redis, "ann")["ids"] == ids[:3]
    finally:
        for listener in listeners:
            listener.close()
        for server in servers:
            server.stop()


def test_two_processes_share_one_port_and_each_client_gets_every_notification_once(
        redis_server, redis, tmp_path):
    accounts.create_user(redis, *USER)
    subscriptions.add(redis, "ann", ["news"], limit=100)
    port = free_port()
    servers = [LiveServer(redis_server.url, tmp_path, port=port, REUSE_PORT="1") for _ in range(2)]
    listeners = []
    try:
        for server in servers:
            server.start()
        pids = {server.process.pid for server in servers}
        answered = {requests.get(servers[0].url + "/healthz", timeout=5).json()["process"]
                    for _ in range(60)}  # a new connection each time, spread by the kernel
        assert answered == pids
        token = servers[0].token(*USER)
        listeners = [Listener(servers[0], token) for _ in range(12)]
        ids = published(Bus(redis), 100)
        settle(listeners, ids)
        for listener in listeners:
            assert listener.ids() == ids
    finally:
        for listener in listeners:
            listener.close()
        for server in servers:
            server.stop()
