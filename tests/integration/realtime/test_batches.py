"""Notifications that reach the relay together are fanned out together: each
client gets one ``notifications`` frame with exactly those of the batch it
may see, in id order, and nothing of anyone else's."""
import uuid

from app.stream.publish import Bus, prepare
from app.users import accounts, subscriptions
from tests.support import Listener, wait_until


def test_a_batch_reaches_each_client_as_exactly_what_it_may_see(live_server, redis):
    for name, topics in (("ann", ["news"]), ("ben", ["sports", "news.local"])):
        accounts.create_user(redis, name, f"{name}-password")
        subscriptions.add(redis, name, topics, limit=100)
    ann = Listener(live_server, live_server.token("ann", "ann-password"))
    ben = Listener(live_server, live_server.token("ben", "ben-password"))
    try:
        envelopes = []
        for n in range(60):
            envelope = {"topic": ["news.world", "news.local", "sports.f1", "weather"][n % 4],
                        "title": f"item {n}"}
            if n % 5 == 0:
                envelope["user"] = ["ann", "ben"][n % 2]
            envelopes.append(envelope)
        ids = Bus(redis).publish_batch([prepare(e) for e in envelopes], str(uuid.uuid4()))

        def visible(user, topics):
            return [i for i, e in zip(ids, envelopes, strict=True)
                    if e.get("user", user) == user
                    and ("user" in e or any(e["topic"] == t or e["topic"].startswith(t + ".")
                                            for t in topics))]
        expected = {"ann": visible("ann", ["news"]), "ben": visible("ben", ["sports", "news.local"])}
        for name, listener in (("ann", ann), ("ben", ben)):
            wait_until(lambda: len(listener.ids()) >= len(expected[name]), timeout=10,
                       message=f"{name}'s notifications")
        assert ann.ids() == expected["ann"]
        assert ben.ids() == expected["ben"]
        # One script published them all at once: the relay took them as batches.
        assert max(ann.frame_sizes) > 1 and max(ben.frame_sizes) > 1
    finally:
        ann.close()
        ben.close()
