"""app/stream/topics.py on a sharded history (app/stream/shards.py): the tally counts
every shard's entries, the newest ``most`` of them all by time, says each topic's newest
by its notification id, catches up shard by shard, and is scanned afresh when one
shard's stream is recreated."""
import pytest

from app.stream.publish import Bus
from app.stream.topics import TopicCounts
from tests.helpers.shards import topic_per_shard
from tests.support import wait_until


def after(redis, entry_id):
    """Wait for Redis's clock to pass ``entry_id``'s millisecond."""
    wait_until(lambda: redis.time()[0] * 1000 + redis.time()[1] // 1000
               > int(entry_id.split("-")[0]), message="a later millisecond")


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def counts_of(answer):
    return {row["topic"]: row["count"] for row in answer["topics"]}


def newest_of(answer):
    return {row["topic"]: row["newest"] for row in answer["topics"]}


@pytest.fixture
def topics(sharded):
    return topic_per_shard(sharded)


def test_every_shards_topics_are_counted_with_their_newest_ids(topics, redis):
    bus = Bus(redis)
    sent = {topic: [bus.publish(topic, f"{topic} {i}") for i in range(k + 1)]
            for k, topic in enumerate(topics)}
    after(redis, sent[topics[2]][-1])
    mine = bus.publish(topics[0], "private", user="ann")  # (in ann's shard)
    answer = TopicCounts().view(redis, "ann", None)
    assert counts_of(answer) == {topics[0]: 2, topics[1]: 2, topics[2]: 3}
    assert newest_of(answer) == {topics[0]: mine, topics[1]: sent[topics[1]][-1],
                                 topics[2]: sent[topics[2]][-1]}
    assert answer["scanned"] == 7 and answer["since"] == sent[topics[0]][0]
    assert counts_of(TopicCounts().view(redis, "bob", None))[topics[0]] == 1


def test_the_newest_entries_of_all_shards_are_scanned_by_time(topics, redis):
    bus = Bus(redis)
    old = [bus.publish(topics[1], f"old {i}") for i in range(10)]
    after(redis, old[-1])  # (the same millisecond in two shards: by shard)
    new = [bus.publish(topics[k % 3], f"new {k}") for k in range(12)]
    answer = TopicCounts(most=15).view(redis, "bob", None)
    assert answer["scanned"] == 15
    assert counts_of(answer) == {topics[0]: 4, topics[1]: 4 + 3, topics[2]: 4}
    assert answer["since"] == old[-3]
    assert newest_of(answer)[topics[2]] == new[-1]


def test_each_shard_is_caught_up_and_a_recreated_one_scanned_afresh(topics, sharded, redis):
    clock = Clock()
    counts = TopicCounts(most=100, refresh=5, clock=clock)
    bus = Bus(redis)
    first = [bus.publish(topic, "first") for topic in topics]
    assert counts_of(counts.view(redis, "bob", None)) == dict.fromkeys(topics, 1)
    later = [bus.publish(topic, "later") for topic in topics[1:]]
    answer = counts.view(redis, "bob", None)  # caught up, not scanned again
    assert counts_of(answer) == {topics[0]: 1, topics[1]: 2, topics[2]: 2}
    assert newest_of(answer)[topics[2]] == later[-1] and answer["scanned"] == 5
    redis.delete(sharded[2].stream)
    after(redis, later[-1])  # the new stream's first id (its epoch) is of a later one
    bus.publish(topics[2], "after the recreate")
    answer = counts.view(redis, "bob", None)
    assert counts_of(answer) == {topics[0]: 1, topics[1]: 2, topics[2]: 1}
    assert answer["since"] == first[0]
