"""A user's feed read over a sharded history (app/stream/sharded_history.py): pages
merged over the shards walk every shard with no gap and no duplicate, both ways."""
from app.stream import sharded_history
from app.stream.publish import Bus
from tests.helpers.shards import topic_per_shard


def _walk_back(redis, shards, limit):
    seen, before = [], None
    for _ in range(50):
        found, _cursor, before = sharded_history.feed_latest(
            redis, shards, "ann", ["*"], limit, before=before and shards.parse(before)[0])
        seen = [n["id"] for n in found] + seen
        if before is None:
            return seen
    raise AssertionError("the walk did not end")


def test_a_page_that_takes_nothing_of_a_shard_leaves_it_where_it_was(sharded, redis):
    """Published: two of shard b, eight of shard a, two of shard b. Newest first, a page
    of three takes b's two newest and one of a; the next takes none of b: b must go on
    from its oldest taken, not above it (which read that one again)."""
    a, b = topic_per_shard(sharded)[:2]
    bus = Bus(redis)
    published = [bus.publish(t, f"n{i}") for i, t in enumerate([b, b] + [a] * 8 + [b, b])]
    for limit in (3, 4, 5):
        walked = _walk_back(redis, sharded, limit)
        assert sorted(walked) == sorted(published) and len(walked) == len(published), limit


def test_pages_after_a_cursor_take_every_shard_once(sharded, redis):
    topics = topic_per_shard(sharded)
    bus = Bus(redis)
    published = [bus.publish(topics[k % 3] if k % 5 else topics[0], f"n{k}") for k in range(17)]
    seen, cursor = [], sharded.format(sharded.start())
    for _ in range(20):
        found, cursor = sharded_history.feed_after(redis, sharded, "ann", ["*"],
                                                   sharded.parse(cursor)[0], 4)
        if not found:
            break
        seen += [n["id"] for n in found]
    assert sorted(seen) == sorted(published) and len(seen) == len(published)
