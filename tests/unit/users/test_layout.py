"""app/users/layout.py: a single Redis's keys under the names Herald gave them before
the cluster layout (layout 1) are moved once by app.key_layout.migrate, and the code
reads them there: a user still signs in, an API key still works, read state,
subscriptions, archive, snoozes and preferences survive."""
import time
from fnmatch import fnmatchcase

import orjson
import pytest
from werkzeug.security import generate_password_hash

from app import key_layout
from app.redis_client import is_cluster
from app.stream.keys import STREAM
from app.users import accounts, archive_and_snooze, layout, preferences, purge, read_state, subscriptions
from app.users.read_state import pad

API_KEY = "hk_" + "k" * 43


def _hash(password):
    """A password hash as layout 1 kept it (a cheap method: any werkzeug hash checks)."""
    return generate_password_hash(password, method="pbkdf2:sha256:1000")
OTHERS = {  # other families' keys, old and new names: none is ours to move
    "herald:born:carol": "1-0", "herald:presence:where:carol": "x", "herald:epoch": "1-0",
    "herald:{herald:stream}:epoch": "1-0", "herald:digest:1": "x", "herald:webhooks": "x",
    "herald:usersx": "x", "herald:subscriptions": "x", "herald:layout:moving:x": "x",
}


@pytest.fixture
def single(redis, monkeypatch):
    if is_cluster(redis):
        pytest.skip("a cluster is never moved: no Herald before this one ran on one")
    monkeypatch.setattr(key_layout, "FAMILIES", ("app.users.layout",))
    redis.xadd(STREAM, {"topic": "t", "user": "", "envelope": b"{}"}, id="100000-0")
    return redis


def write_layout_1(redis, until):
    """What the code before the cluster layout wrote for user carol (and a user id
    that begins like a key kind), an admin and an API key."""
    redis.hset("herald:user:carol", mapping={"password": _hash("carol-password"),
                                             "admin": "0", "created": "1700000000",
                                             "token_key": "0123456789abcdef"})
    redis.hset("herald:user:ada", mapping={"password": _hash("ada-password"), "admin": "1",
                                           "created": "1700000000", "token_key": "fedcba9876543210"})
    redis.sadd("herald:users", "carol", "ada")
    digest = accounts.api_key_digest(API_KEY)
    redis.hset("herald:apikeys", "etl", digest)
    redis.hset("herald:apikeys:created", "etl", "1700000001")
    redis.set(f"herald:apikey:{digest}", "etl")
    redis.sadd("herald:subs:carol", "news", "ops")
    redis.sadd("herald:subs:ids:x", "odd")
    redis.hset("herald:read:carol", mapping={"upto": "5-0", "version": "3", "seen": "6-0"})
    redis.zadd("herald:readids:carol", {pad("7-0"): 0})
    redis.zadd("herald:unreadids:carol", {pad("3-0"): 0})
    redis.zadd("herald:readids:x", {pad("8-0"): 0})
    redis.zadd("herald:archived:carol", {pad("2-0"): 1700000000000})
    redis.zadd("herald:snoozed:carol", {pad("4-0"): until})
    redis.zadd("herald:snoozes", {"carol\t4-0": until})
    redis.set("herald:prefs:carol", orjson.dumps({"email": "c@example.com", "timezone": "UTC",
                                                  "quiet": None, "rules": []}))
    for key, value in OTHERS.items():
        redis.set(key, value)


def test_the_move_keeps_what_every_user_had(single):
    until = int(time.time() * 1000) + 60_000
    write_layout_1(single, until)
    assert key_layout.migrate(single) == 15  # herald:snoozes keeps its name
    assert accounts.authenticate(single, "carol", "carol-password") == {
        "name": "carol", "admin": False, "token_key": "0123456789abcdef"}
    assert accounts.authenticate(single, "ada", "ada-password")["admin"] is True
    assert [u["name"] for u in accounts.list_users(single)] == ["ada", "carol"]
    assert accounts.api_key_name(single, API_KEY) == "etl"
    assert accounts.list_api_keys(single) == [{"name": "etl", "created": 1700000001}]
    assert subscriptions.list_topics(single, "carol") == ["news", "ops"]
    assert subscriptions.list_topics(single, "ids:x") == ["odd"]
    assert read_state.get(single, "carol") == {"upto": "5-0", "ids": ["7-0"], "unread": ["3-0"],
                                               "seen": "6-0", "version": 3}
    assert read_state.get(single, "x")["ids"] == ["8-0"]
    assert archive_and_snooze.get(single, "carol") == {"archived": ["2-0"], "snoozed": {"4-0": until}}
    assert preferences.get(single, "carol")["email"] == "c@example.com"
    assert archive_and_snooze.wake_due(single, now_ms=until) == [("carol", "4-0")]
    assert not read_state.is_read(read_state.get(single, "carol"), "4-0")
    assert {k: single.get(k).decode() for k in OTHERS} == OTHERS  # other families' keys stay
    assert key_layout.migrate(single) == 0  # once


def test_the_moved_keys_can_be_changed_and_deleted(single):
    write_layout_1(single, int(time.time() * 1000) + 60_000)
    key_layout.migrate(single)
    accounts.revoke_api_key(single, "etl")
    assert accounts.api_key_name(single, API_KEY) is None
    purge.delete_user(single, "carol")
    assert sorted(k for k in single.scan_iter() if b"carol" in k) == [
        b"herald:born:carol", b"herald:presence:where:carol"]  # not ours
    assert single.zrange(archive_and_snooze.SNOOZES, 0, -1) == []
    with pytest.raises(accounts.AccountError):
        accounts.remove_account(single, "carol")


def test_no_glob_matches_a_new_name():
    """A key at its new name is never moved again, nor taken for another kind."""
    users = ["carol", "ids:x", "a}b", "user:4", "*"]
    new = [accounts.USERS, accounts.API_KEYS, accounts.API_KEYS_CREATED, accounts.api_key_record("ab"),
           *(accounts.user_key(u) for u in ("carol", "a-b")),
           *(key for u in users for key in (subscriptions.key(u), preferences.key(u),
                                             *read_state.keys_of(u), *archive_and_snooze.keys_of(u)))]
    assert not [(name, glob) for name in new for glob, _rename in layout.RENAMES
                if fnmatchcase(name, glob)]
    # And each old kind goes to the new name of the same kind and user.
    renames = dict(layout.RENAMES)
    assert renames["herald:read:*"]("herald:read:ids:x") == read_state.keys_of("ids:x")[0]
    assert renames["herald:readids:*"]("herald:readids:x") == read_state.keys_of("x")[1]
    assert renames["herald:user:*"]("herald:user:carol") == accounts.user_key("carol")
