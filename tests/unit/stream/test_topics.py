"""app/stream/topics.py: the tally of the recent history's topics is bounded to the newest
entries, caught up with what is published after it, scanned afresh when it is old or
the stream was recreated, and answers each user only what they may see."""
from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.stream.shards import configured as configured_shards
from app.stream.topics import CATCH_UP, TopicCounts
from app.users import accounts
from tests.support import wait_until


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def counts_of(answer, field="topics", name="topic"):
    return {row[name]: row["count"] for row in answer[field]}


def test_topics_and_prefixes_with_counts_and_newest(redis):
    bus = Bus(redis)
    for _ in range(3):
        bus.publish("spark.job.succeeded", "done")
    bus.publish("spark.job.failed", "failed")
    newest = bus.publish("ops", "ops itself")
    last_spark = bus.publish("spark.stage", "stage")
    answer = TopicCounts().view(redis, "bob", None)
    assert answer["topics"] == [
        {"topic": "spark.job.succeeded", "count": 3, "newest": answer["topics"][0]["newest"]},
        {"topic": "ops", "count": 1, "newest": newest},
        {"topic": "spark.job.failed", "count": 1, "newest": answer["topics"][2]["newest"]},
        {"topic": "spark.stage", "count": 1, "newest": last_spark},
    ]
    assert answer["prefixes"] == [{"prefix": "spark", "count": 5, "newest": last_spark},
                                  {"prefix": "spark.job", "count": 4,
                                   "newest": answer["topics"][2]["newest"]}]
    assert answer["scanned"] == 6 and not answer["truncated"]
    first = configured_shards().of_topic("spark")  # (spark's shard, in a sharded history)
    assert answer["since"] == first.public(redis.xrange(first.stream, count=1)[0][0])


def test_a_prefix_counts_what_subscribing_to_it_matches_the_topic_of_its_name_too(redis):
    bus = Bus(redis)
    bus.publish("ops", "ops itself")
    bus.publish("ops.db", "below")
    bus.publish("ops.db.slow", "further below")
    answer = TopicCounts().view(redis, "bob", None)
    assert counts_of(answer) == {"ops": 1, "ops.db": 1, "ops.db.slow": 1}
    assert counts_of(answer, "prefixes", "prefix") == {"ops": 3, "ops.db": 2}


def test_an_empty_history_answers_nothing(redis):
    assert TopicCounts().view(redis, "bob", None) == {
        "topics": [], "prefixes": [], "scanned": 0, "since": None, "truncated": False}


def test_private_notifications_count_only_for_their_user(redis):
    accounts.create_user(redis, "bob", "bob-password")
    accounts.create_user(redis, "eve", "eve-password")
    bus = Bus(redis)
    bus.publish("ops.db", "public")
    bus.publish("ops.db", "eve's", user="eve")
    bus.publish("hr.review", "eve's review", user="eve")
    bus.publish("ops.db", "bob's", user="bob")
    counts = TopicCounts()
    bob, eve = counts.view(redis, "bob", None), counts.view(redis, "eve", None)
    assert counts_of(bob) == {"ops.db": 2}
    assert counts_of(bob, "prefixes", "prefix") == {"ops": 2}
    assert counts_of(eve) == {"ops.db": 2, "hr.review": 1}
    assert counts_of(eve, "prefixes", "prefix") == {"ops": 2, "hr": 1}
    assert "hr" not in str(bob)


def test_a_name_does_not_inherit_the_private_notifications_of_before_its_account(redis):
    bus = Bus(redis)
    bus.publish("hr.review", "to a former carol", user="carol")
    accounts.create_user(redis, "carol", "carol-password")
    bus.publish("ops.db", "to the new carol", user="carol")
    assert counts_of(TopicCounts().view(redis, "carol", None)) == {"ops.db": 1}


def test_a_limited_token_sees_only_inside_its_topics(redis):
    bus = Bus(redis)
    for topic in ("board.42.card", "board.42.card", "board.7.card", "ops.db"):
        bus.publish(topic, "t")
    bus.publish("board.42.secret", "mine", user="alice")
    bus.publish("ops.db", "mine outside", user="alice")
    answer = TopicCounts().view(redis, "alice", ["board.42"])
    assert counts_of(answer) == {"board.42.card": 2, "board.42.secret": 1}
    assert counts_of(answer, "prefixes", "prefix") == {"board.42": 3}


def test_only_the_newest_entries_are_scanned(redis):
    bus = Bus(redis)
    for i in range(30):
        bus.publish("old", f"o{i}")
    for i in range(20):
        bus.publish("new.one", f"n{i}")
    answer = TopicCounts(most=25).view(redis, "bob", None)
    assert counts_of(answer) == {"new.one": 20, "old": 5}
    assert answer["scanned"] == 25
    assert answer["since"] == redis.xrevrange(STREAM, count=25)[-1][0].decode()


def test_what_is_published_later_is_counted_at_once_and_old_entries_leave(redis):
    clock = Clock()
    counts = TopicCounts(most=10, refresh=5, clock=clock)
    bus = Bus(redis)
    for i in range(10):
        bus.publish("first", f"f{i}")
    assert counts_of(counts.view(redis, "bob", None)) == {"first": 10}
    bus.publish("second", "s")
    answer = counts.view(redis, "bob", None)
    assert counts_of(answer) == {"first": 10, "second": 1} and answer["scanned"] == 11
    clock.now = 6  # the tally is recounted: the newest 10 only
    assert counts_of(counts.view(redis, "bob", None)) == {"first": 9, "second": 1}


def test_a_burst_past_the_catch_up_is_scanned_afresh(redis):
    counts = TopicCounts(most=50, clock=Clock())
    bus = Bus(redis)
    bus.publish("before", "b")
    assert counts_of(counts.view(redis, "bob", None)) == {"before": 1}
    pipe = redis.pipeline()
    for _ in range(CATCH_UP):  # as many as a catch-up reads: too many, maybe more follow
        pipe.xadd(STREAM, {"topic": "burst", "user": "", "envelope": "{}"})
    pipe.execute()
    answer = counts.view(redis, "bob", None)
    assert counts_of(answer) == {"burst": 50} and answer["scanned"] == 50


def test_a_recreated_stream_is_scanned_afresh(redis):
    counts = TopicCounts(clock=Clock())
    bus = Bus(redis)
    gone = bus.publish("gone", "g")
    assert counts_of(counts.view(redis, "bob", None)) == {"gone": 1}
    redis.delete(configured_shards().of_topic("gone").stream)
    # The new stream's first id (its epoch) is of a later millisecond than the old one's.
    wait_until(lambda: redis.time()[0] * 1000 + redis.time()[1] // 1000 > int(gone.split("-")[0]))
    bus.publish("fresh", "f")
    assert counts_of(counts.view(redis, "bob", None)) == {"fresh": 1}
