"""The console's consumer-group figures ride out ``DEL herald:stream`` (issue 35).

A group lives in the stream's key: a stream deleted between group_queue's XINFO GROUPS
and its XPENDING made XPENDING answer NOGROUP, which nothing caught, so the whole
console (GET /api/ops/status) was a 500. The group went with its stream: it is shown
as absent, as when the stream does not exist at all. (With several shards, the race is
the deletion of every shard's stream: a group is shown absent when no shard has it.)
"""
import pytest
import redis as redis_lib

from app.digests import store as digest_store
from app.ops import console
from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.stream.shards import configured
from app.webhooks import store as webhook_store
from tests.support import sign_in

ABSENT = {"exists": False, "pending": 0, "lag": 0, "consumers": 0, "oldest_pending_seconds": None}


def delete_history(redis):
    """Delete the history: herald:stream, and every shard's stream with several."""
    redis.delete(*(shard.stream for shard in configured()))


class DeletesBeforePending(redis_lib.Redis):
    """A client on which the stream is deleted (by someone else) just before XPENDING."""

    def xpending(self, name, groupname):
        delete_history(redis_lib.Redis(connection_pool=self.connection_pool))
        return super().xpending(name, groupname)


def with_groups(redis):
    digest_store.ensure_group(redis)
    for shard in configured():
        redis.xgroup_create(shard.stream, webhook_store.GROUP, "0")
    Bus(redis).publish_envelope({"topic": "ops.test", "title": "one"})
    ops = configured().of_topic("ops").stream  # herald:stream with one shard
    redis.xreadgroup(digest_store.GROUP, "digest-a", {ops: ">"}, count=1)


def test_a_group_with_a_pending_entry_is_shown(redis):
    with_groups(redis)
    queue = console.group_queue(redis, digest_store.GROUP, 0)
    assert queue["exists"] and queue["pending"] == 1 and queue["consumers"] == 1


@pytest.mark.single_redis("races a subclass of redis.Redis on its pool; a cluster client has one per node")
@pytest.mark.parametrize("group", [digest_store.GROUP, webhook_store.GROUP])
def test_a_stream_deleted_between_xinfo_and_xpending_is_an_absent_group(redis, group):
    with_groups(redis)
    racing = DeletesBeforePending(connection_pool=redis.connection_pool)
    assert console.group_queue(racing, group, 0) == ABSENT
    assert not redis.exists(STREAM)


def test_no_stream_at_all_is_an_absent_group(redis):
    assert console.group_queue(redis, digest_store.GROUP, 0) == ABSENT
    with_groups(redis)
    delete_history(redis)
    assert console.group_queue(redis, digest_store.GROUP, 0) == ABSENT


@pytest.mark.single_redis("races a subclass of redis.Redis on its pool; a cluster client has one per node")
def test_the_console_answers_through_the_race(client, redis, admin, monkeypatch):
    with_groups(redis)
    real = redis_lib.Redis.xpending

    def deleted_first(self, name, groupname):
        delete_history(redis_lib.Redis(connection_pool=self.connection_pool))
        return real(self, name, groupname)

    monkeypatch.setattr(redis_lib.Redis, "xpending", deleted_first)
    sign_in(client, *admin)
    reply = client.get("/api/ops/status")
    assert reply.status_code == 200, reply.get_data(as_text=True)[:300]
    status = reply.get_json()
    assert status["digests"]["exists"] is False and status["digests"]["outbox"] == 0
    assert status["webhooks"]["exists"] is False and status["webhooks"]["endpoints"] == 0
    assert status["archiver"]["newest"] is None

