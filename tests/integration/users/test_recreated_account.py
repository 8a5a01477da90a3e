"""Issue 23, item 5: ``users delete carol`` then ``users create carol``: the new carol,
and a host-app token with ``sub=carol``, see none of the old carol's private
notifications (one published after the delete included), over REST, Socket.IO
replay and an event stream, and none of what was hers (read state, archive,
snoozes, preferences, subscriptions, digests); the old carol's tokens, connections
and streams end at the delete. What is published to the new carol reaches her."""
import threading
import time

import pytest
import requests

from app.digests import store as digests
from app.realtime.rooms import NAMESPACE
from app.stream.publish import Bus
from app.users import archive_and_snooze, preferences, read_state, subscriptions
from tests.helpers.keys import SECRET, host_token
from tests.support import EventStream, Listener, LiveServer, issue_token, wait_until

OLD, NEW = "old-carol-password", "new-carol-password"


@pytest.fixture
def server(redis_server, redis, tmp_path):
    live = LiveServer(redis_server.url, tmp_path, JWT_SECRET=SECRET)
    live.start()
    yield live
    live.stop()


def cli(runner, *args):
    result = runner.invoke(args=list(args))
    assert result.exit_code == 0, result.output
    return result.output


def feed(server, token, **params):
    reply = requests.get(server.url + "/api/notifications", params={"after": "0", **params},
                         headers={"Authorization": f"Bearer {token}"}, timeout=5)
    assert reply.status_code == 200, reply.text
    return [n["id"] for n in reply.json()["notifications"]]


def replayed(server, token):
    """Every id a Socket.IO connection with ``last_id`` 0 is replayed."""
    listener = Listener(server, token, last_id="0")
    try:
        wait_until(lambda: listener.replays, message="the replay")
        return listener.ids()
    finally:
        listener.close()


def test_a_recreated_account_starts_clean(server, redis, runner):
    bus = Bus(redis)
    cli(runner, "users", "create", "carol", "--admin", "--password", OLD)
    subscriptions.add(redis, "carol", ["*"], limit=10)
    public = bus.publish("news", "for everyone")
    secret = bus.publish("hr.review", "old carol's review", user="carol")
    read_state.mark(redis, "carol", {"ids": [public, secret]})
    archive_and_snooze.archive(redis, "carol", [public])
    snoozed = bus.publish("hr.review", "old carol's other review", user="carol")
    archive_and_snooze.snooze(redis, "carol", snoozed, int(time.time() * 1000) + 3_600_000)
    preferences.put(redis, "carol", {"email": "carol@example.com",
                                     "rules": [{"topic": "hr", "mode": "daily"}]})
    digests.create(redis, "carol", {"email": "carol@example.com", "topics": ["hr"],
                                    "schedule": "0 9 * * *"})
    old_token = issue_token("carol")
    assert secret in feed(server, old_token)
    old_listener = Listener(server, old_token)
    gone = threading.Event()
    old_listener.sio.on("disconnect", lambda *reason: gone.set(), namespace=NAMESPACE)
    old_stream = EventStream(server, old_token)
    try:
        assert old_stream.next_event()[0] == "replayed"
        cli(runner, "users", "delete", "carol", "--yes")
        assert gone.wait(10), "the deleted account's connection stayed open"
        with pytest.raises(AssertionError, match="the stream ended"):
            old_stream.events_until("never-sent", most=100)
    finally:
        old_listener.close()
        old_stream.close()
    after_delete = bus.publish("hr.review", "to carol, after the delete", user="carol")

    cli(runner, "users", "create", "carol", "--password", NEW)
    reply = requests.get(server.url + "/api/notifications", timeout=5,
                         headers={"Authorization": f"Bearer {old_token}"})
    assert reply.status_code == 401, "the old account's token still works"
    token = issue_token("carol")
    jwt = host_token("carol")
    subscriptions.add(redis, "carol", ["*"], limit=10)  # the new carol follows everything too
    for reader in (token, jwt):
        seen = feed(server, reader)
        assert not {secret, snoozed, after_delete} & set(seen), seen
        assert public in seen  # public history is anyone's who subscribes
        assert secret not in replayed(server, reader) and after_delete not in replayed(server, reader)
        stream = EventStream(server, reader, last_id="0")
        try:
            events = stream.events_until("replayed")
        finally:
            stream.close()
        assert not {secret, after_delete} & {i for _n, i, _d in events}
        one = requests.get(f"{server.url}/api/notifications/{secret}", timeout=5,
                           headers={"Authorization": f"Bearer {reader}"})
        assert one.status_code == 404

    assert read_state.get(redis, "carol") == {"upto": None, "ids": [], "unread": [], "seen": None,
                                              "version": 0}
    assert archive_and_snooze.get(redis, "carol") == {"archived": [], "snoozed": {}}
    assert preferences.get(redis, "carol")["rules"] == []
    assert digests.list_all(redis, owner="carol") == []
    assert not any(m.startswith(b"carol\t") for m in redis.zrange(archive_and_snooze.SNOOZES, 0, -1))

    fresh = bus.publish("hr.review", "the new carol's own", user="carol")
    assert fresh in feed(server, token) and fresh in feed(server, jwt)
