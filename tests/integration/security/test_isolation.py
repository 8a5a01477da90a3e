"""Isolation proof: a private notification for ann reaches ann alone, by every path.

Ben is an admin who subscribes to everything ("*") and has an email digest
of everything, which makes him the most likely to see what is not his: live
delivery, replay on reconnect, REST history, read-state events and digests
all must keep ann's notification from him. Each check also shows that ben's
path works (he gets the public notification beside it), so a path that
delivered nothing would fail here rather than pass.
"""
import time

import requests

from app.digests import store
from app.digests.smtp import Smtp
from app.digests.worker import Worker
from app.stream.publish import Bus
from app.users import accounts, read_state, subscriptions
from tests.support import Listener, issue_token, wait_until


def setup_users(redis):
    accounts.create_user(redis, "ann", "ann-password")
    accounts.create_user(redis, "ben", "ben-password", admin=True)
    subscriptions.add(redis, "ann", ["news"], limit=10)
    subscriptions.add(redis, "ben", ["*"], limit=10)


def test_live_replay_rest_and_read_state(live_server, redis):
    setup_users(redis)
    bus = Bus(redis)
    ann = Listener(live_server, live_server.token("ann", "ann-password"))
    ann_tab2 = Listener(live_server, live_server.token("ann", "ann-password"))
    ben = Listener(live_server, live_server.token("ben", "ben-password"))
    listeners = [ann, ann_tab2, ben]
    try:
        before = bus.publish("news.public", "for everyone")
        secret = bus.publish("news.secret", "for ann only", body="ann's secret", user="ann")
        after = bus.publish("news.public", "for everyone, later")

        # Live.
        for listener in listeners:
            wait_until(lambda: after in listener.ids(), timeout=10, message="live delivery")
        assert ann.ids() == ann_tab2.ids() == [before, secret, after]
        assert ben.ids() == [before, after]

        # Replay: reconnecting from before the secret.
        ben_again = Listener(live_server, live_server.token("ben", "ben-password"), last_id=before)
        ann_again = Listener(live_server, live_server.token("ann", "ann-password"), last_id=before)
        listeners += [ben_again, ann_again]
        wait_until(lambda: after in ben_again.ids() and after in ann_again.ids(), timeout=10,
                   message="replay")
        assert ben_again.ids() == [after]
        assert ann_again.ids() == [secret, after]

        # REST history, with and without a cursor.
        for params in ({}, {"after": "0-0"}, {"after": before}):
            got = {name: [n["id"] for n in requests.get(
                live_server.url + "/api/notifications", params=params, timeout=5,
                headers={"Authorization": f"Bearer {issue_token(name)}"}).json()["notifications"]]
                for name in ("ann", "ben")}
            assert secret in got["ann"] and secret not in got["ben"], params
            assert after in got["ben"]

        # Read state: ann reading her notification tells ann's tabs, never ben's.
        ann.call("read", {"ids": [secret]})
        wait_until(lambda: ann_tab2.reads, timeout=10, message="read event to ann's other tab")
        ben.call("read", {"ids": [after]})
        # ben's own event comes after any of ann's that would have been misrouted to him.
        wait_until(lambda: ben_again.reads and ben.reads, timeout=10, message="ben's own read event")
        assert all(secret not in change["ids"] for change in ben.reads + ben_again.reads)
        assert all(after not in change["ids"] for change in ann.reads + ann_tab2.reads)
        assert read_state.get(redis, "ben")["ids"] == [after]
        assert read_state.get(redis, "ann")["ids"] == [secret]
    finally:
        for listener in listeners:
            listener.close()


def test_digests_keep_private_notifications_to_their_owner(redis, smtp_server):
    setup_users(redis)
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    for owner in ("ben", "ada"):
        store.create(redis, owner, {"email": f"{owner}@example.com", "topics": ["*"],
                                    "schedule": "* * * * *"})
    worker = Worker(redis, Smtp.from_url(smtp_server.url), "http://herald.test/",
                    clock=lambda: time.time() + 120)
    worker.collector.ensure_group()
    bus = Bus(redis)
    bus.publish("news.secret", "for ann only", user="ann")
    bus.publish("news.secret", "for ada only", user="ada")
    bus.publish("news.public", "for everyone")
    for _ in range(6):
        worker.step(block_ms=50)
    bodies = {m["To"]: m.get_body(("plain",)).get_content() for m in smtp_server.messages}
    assert set(bodies) == {"ben@example.com", "ada@example.com"}
    assert "for everyone" in bodies["ben@example.com"]
    assert "for ann only" not in bodies["ben@example.com"]
    assert "for ada only" not in bodies["ben@example.com"]
    assert "for ada only" in bodies["ada@example.com"]
    assert "for ann only" not in bodies["ada@example.com"]
