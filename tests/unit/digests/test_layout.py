"""The digests' keys under their layout 1 names (before hash tags), moved once by
app.key_layout.migrate on a single Redis: the new code then lists the subscription,
sends its pending window and its critical email once each, keeps an email marked
sent as sent, and takes a notification marked collected as collected."""
import orjson
import pytest

from app import key_layout
from app.digests import layout, store, windows
from app.digests.collect import GROUP, Collector
from app.digests.send import Sender
from app.stream.publish import Bus
from app.stream.shards import configured
from tests.redis_cluster import ON_CLUSTER

ID = "0123456789ab"
OLD = f"herald:digest:{ID}"
DUE, DONE = 1_700_000_000, 1_700_003_600  # two past windows; DONE's email went already


class Smtp:
    """Takes each email into ``sent``."""

    def __init__(self):
        self.sent = []

    def send(self, message):
        self.sent.append(message)


def envelope(n, severity="info"):
    return {"id": f"{DUE * 1000 - 1000 + n}-0", "topic": "ops.db", "title": f"n{n}",
            "severity": severity, "ts": "2023-11-14T22:13:00.000Z"}


def write_layout_1(redis):
    """A subscription, two windows, a critical email waiting, as the code before wrote them."""
    record = dict(store.validate({"email": "ops@example.com", "topics": ["ops"],
                                  "schedule": "hourly", "critical_now": True}),
                  owner="ada", created=DUE - 86400)
    redis.hset(OLD, mapping={k: orjson.dumps(v) for k, v in record.items()})
    redis.sadd("herald:digests", ID)
    redis.set("herald:digests:changed", 3)
    for window, n in ((DUE, 1), (DONE, 2)):
        item = envelope(n)
        redis.hincrby(f"{OLD}:w:{window}:counts", "ops.db\tinfo", 1)
        redis.zadd(f"{OLD}:w:{window}:items", {orjson.dumps(item): windows.item_score(item)})
        redis.zadd(f"{OLD}:windows", {str(window): window})
    redis.set(f"{OLD}:closed", DUE - 3600)
    redis.set(f"herald:digest:sent:digest-{ID}-{DONE}", 1, ex=windows.SENT_TTL)
    redis.rpush("herald:digest:outbox", orjson.dumps({"digest": ID, "envelope": envelope(3, "critical")}))


def test_new_names_carry_the_digests_tag_and_old_ones_map_to_them():
    assert store.key(ID) == "herald:{digests}:" + ID
    assert (store.DIGESTS, store.CHANGED, windows.OUTBOX) == (
        "herald:{digests}:all", "herald:{digests}:changed", "herald:{digests}:outbox")
    assert layout.moved("herald:digests") == store.DIGESTS
    assert layout.moved("herald:digests:changed") == store.CHANGED
    assert layout.moved(f"{OLD}:w:{DUE}:items") == windows.items_key(ID, DUE)
    assert layout.moved(f"herald:digest:sent:digest-{ID}-{DONE}") == windows.sent_key(
        windows.digest_key(ID, DONE))
    for other in ("herald:digests:epoch",  # the group's epoch: app/stream's
                  "herald:digest:", "herald:webhooks", "herald:{digests}:all"):
        assert layout.moved(other) is None


@pytest.mark.skipif(ON_CLUSTER, reason="the move is for a single Redis (no Herald before "
                    "this one ran on a cluster)")
def test_after_the_move_the_new_code_reads_and_sends_each_email_once(redis):
    write_layout_1(redis)
    assert key_layout.migrate(redis) >= 11
    assert redis.keys("herald:digest:*") == [] and not redis.exists("herald:digests")
    [record] = store.list_all(redis)
    assert (record["id"], record["owner"], record["email"]) == (ID, "ada", "ops@example.com")
    smtp = Smtp()
    sender = Sender(redis, smtp, "http://herald.test/", clock=lambda: DONE + 60)
    assert sender.step() == 2  # the critical email and window DUE; DONE was sent before
    assert ["[critical] n3", "Herald digest: 1 notification"] == [
        m["Subject"].split(" until")[0] for m in smtp.sent]
    assert sender.step() == 0 and len(smtp.sent) == 2
    assert redis.zcard(windows.windows_key(ID)) == 0 and redis.llen(windows.OUTBOX) == 0
    assert windows.closed_upto(redis, ID) == DONE


@pytest.mark.skipif(ON_CLUSTER, reason="the move is for a single Redis")
def test_a_pending_notification_marked_collected_before_the_move_is_not_collected_again(redis):
    write_layout_1(redis)
    collector = Collector(redis, consumer="digest-a", claim_idle=30)
    collector.ensure_group()
    entry_id = Bus(redis).publish("ops.db", "collected by the old worker")
    stream = configured().of_topic("ops").stream
    redis.xreadgroup(GROUP, "digest-a", {stream: ">"})  # pending: the old worker's crash
    redis.set(f"herald:digest:collected:{entry_id}", 1, ex=86400)
    before = redis.hgetall(f"{OLD}:w:{DUE}:counts")
    key_layout.migrate(redis)
    assert collector.step(block_ms=10) == 1
    assert (collector.collected, collector.duplicates) == (0, 1)
    assert redis.xpending(stream, GROUP)["pending"] == 0
    assert redis.hgetall(windows.counts_key(ID, DUE)) == before
    assert sum(windows.read(redis, ID, float(w))[2]
               for w in redis.zrange(windows.windows_key(ID), 0, -1)) == 2  # DUE's and DONE's


def test_migrate_leaves_new_names_alone(redis):
    """A Redis already on the new names (or a cluster): nothing of the digests moves."""
    store.create(redis, "ada", {"email": "ops@example.com", "topics": ["ops"]})
    names = sorted(redis.keys("herald:{digests}:*"))
    key_layout.migrate(redis)
    assert sorted(redis.keys("herald:{digests}:*")) == names
    assert len(store.list_all(redis)) == 1
