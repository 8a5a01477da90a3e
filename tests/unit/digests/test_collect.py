"""Collecting into digest windows while a subscription is deleted."""
from app.digests import store, windows
from app.digests.collect import Collector
from app.stream.publish import Bus
from app.users import accounts


def test_a_digest_deleted_while_a_notification_is_collected_gets_no_window(redis):
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    record = store.create(redis, "ada", {"email": "ada@example.com", "topics": ["ops"],
                                          "schedule": "hourly"})
    deleted = []

    def delete_meanwhile(step):
        """Right before the collector's transaction: the admin deletes the digest."""
        if step == "collect:before-exec" and not deleted:
            deleted.append(store.delete(redis, record["id"], "ada"))

    collector = Collector(redis, delete_meanwhile)
    collector.ensure_group()
    Bus(redis).publish("ops.one", "collected as the digest goes")
    assert collector.step(block_ms=50) == 1
    assert deleted == [True]
    assert redis.keys(f"{store.key(record['id'])}*") == []  # no window left behind
    assert not redis.exists(windows.windows_key(record["id"]))
