"""Deleting a user removes every per-user key, and a digest never collects a private
notification published before it was made (docs/contract.md, account identity)."""
import time

from app.digests import store as digests
from app.stream import history
from app.stream.keys import BORN
from app.stream.publish import Bus
from app.stream.shards import configured as configured_shards
from app.stream.shards import stream_id
from app.users import (
    accounts,
    archive_and_snooze,
    bulk_by_filter,
    preferences,
    purge,
    read_state,
    subscriptions,
)


def test_delete_leaves_no_key_of_the_user_but_the_born_floor(redis):
    accounts.create_user(redis, "carol", "carol-password", admin=True)
    bus = Bus(redis)
    entry = bus.publish("hr", "x", user="carol")
    subscriptions.add(redis, "carol", ["*"], limit=10)
    read_state.mark(redis, "carol", {"ids": [entry]})
    read_state.mark(redis, "carol", {"unread": [entry]})
    archive_and_snooze.archive(redis, "carol", [entry])
    archive_and_snooze.snooze(redis, "carol", entry, int(time.time() * 1000) + 60_000)
    preferences.put(redis, "carol", {"email": "c@example.com",
                                     "rules": [{"topic": "hr", "mode": "daily"}]})
    digests.create(redis, "carol", {"email": "c@example.com", "topics": ["hr"],
                                    "schedule": "0 9 * * *"})
    purge.delete_user(redis, "carol")
    left = [k.decode() for k in redis.scan_iter() if b"carol" in k]
    assert left == [BORN + "carol"], left
    carols = configured_shards().of_user("carol")  # the shard of carol's private ones
    assert redis.get(BORN + "carol").decode() == history.last_generated(redis, carols) \
        == stream_id(entry)
    assert not any(b"carol" in m for m in redis.zrange(archive_and_snooze.SNOOZES, 0, -1))
    assert [d for d in digests.list_all(redis) if d["owner"] == "carol"] == []


def test_a_digest_collects_no_private_notification_older_than_itself():
    record = {"enabled": True, "owner": "carol", "min_severity": "info", "topics": ["*"],
              "created": 1_700_000_000}
    before = {"id": "1699999999999-0", "topic": "hr", "user": "carol"}
    after = {"id": "1700000000000-0", "topic": "hr", "user": "carol"}
    assert not digests.wants(record, before)
    assert digests.wants(record, after)
    assert digests.wants(record, {**before, "user": None})  # public: not the floor's business


def test_no_two_user_ids_share_a_per_user_key():
    """A user id is any string (docs/contract.md, account identity). A user's own keys
    are ``herald:{u:`` + the whole id + ``}:`` + a kind holding no ``}`` (the user's hash
    tag, app/key_layout.py); the other keys per name are a prefix plus the whole id, no
    prefix beginning another one or any other key Herald writes. So no id (``a:b``,
    ``ids:x``, ``4``/``42``, ``a}:subs``) reaches another's."""
    from app.realtime import presence
    from app.stream import keys

    own = [subscriptions.key, preferences.key, *(
        (lambda user, i=i: read_state.keys_of(user)[i]) for i in range(3)), *(
        (lambda user, i=i: archive_and_snooze.keys_of(user)[i]) for i in range(2)),
        bulk_by_filter.undo_key]
    assert sorted(purge.per_user_keys("x")) == sorted(build("x") for build in own)
    kinds = [build("x").removeprefix("herald:{u:x}:") for build in own]
    assert all(build("x").startswith("herald:{u:x}:") for build in own)
    assert len(set(kinds)) == len(kinds) and not [k for k in kinds if not k or "}" in k]
    prefixes = [BORN, presence.WHERE, accounts.USER]
    for one in prefixes:
        assert one.endswith(":") and not one.startswith("herald:{u:")
        assert [other for other in prefixes if other != one and other.startswith(one)] == []
    others = [value for module in (keys, archive_and_snooze, presence, accounts)
              for value in vars(module).values()
              if isinstance(value, str) and value.startswith("herald:") and value not in prefixes]
    assert others and not [(o, p) for o in others for p in prefixes if o.startswith(p)]
    assert not [o for o in others if o.startswith("herald:{u:")]
    builders = own + [lambda user, p=p: p + user for p in prefixes]
    ids = ["a", "a:b", "b", "4", "42", "ids:x", "user:4", "x" * 255, "a\tb", "a}:subs", "{u:a",
           "a}", ""]
    built = [build(user) for build in builders for user in ids]
    assert len(set(built)) == len(built)
