"""The window of recent notifications (app/realtime/recent.py) and replays read from it
(app/realtime/replay.py): the same notifications, in the same order, as from Redis."""
import pytest

from app.realtime import replay
from app.realtime.recent import Recent
from app.realtime.seam import ReplaySeam
from app.stream.envelope import id_key
from app.stream.follow import LiveFollower
from app.stream.keys import STREAM
from app.stream.publish import Bus


def entry(n, topic="news.a", owner=None):
    entry_id = f"{n}-0"
    return id_key(entry_id), entry_id, topic, owner, f'{{"id":"{entry_id}"}}'


def test_it_covers_what_follows_its_start_and_lets_the_oldest_go():
    recent = Recent(max_entries=3)
    assert not recent.covers((0, 0))  # not begun: nothing
    recent.begin("10-0")
    assert recent.covers((10, 0)) and not recent.covers((9, 9))
    for n in (11, 12, 13, 14):
        recent.add(*entry(n))
    assert [e[0] for e in recent.after((0, 0))] == ["12-0", "13-0", "14-0"]
    assert recent.covers((11, 0)) and not recent.covers((10, 0))  # 11 was let go
    assert [e[0] for e in recent.after((12, 0))] == ["13-0", "14-0"]


def test_a_relay_that_began_without_redis_covers_from_its_first_delivery():
    recent = Recent()
    recent.add(*entry(7))
    assert recent.covers((7, 0)) and not recent.covers((6, 0))


def test_ids_going_back_start_it_again():
    recent = Recent()
    recent.begin("1-0")
    recent.add(*entry(5))
    recent.add(*entry(3))  # the stream was replaced
    assert [e[0] for e in recent.after((0, 0))] == ["3-0"]
    assert not recent.covers((2, 0))


def test_it_holds_about_max_bytes_of_json():
    recent = Recent(max_bytes=40)
    recent.begin("0-0")
    for n in range(1, 6):
        recent.add(*entry(n))  # 13 bytes each
    assert len(recent) == 3 and recent.covers((2, 0)) and not recent.covers((1, 0))


def test_backfill_reads_the_newest_entries_up_to_the_position(redis):
    bus = Bus(redis)
    ids = [bus.publish("news.a", f"n{i}") for i in range(5)]
    recent = Recent(max_entries=3)
    recent.backfill(redis, ids[3])
    assert [e[0] for e in recent.after((0, 0))] == ids[1:4]
    assert recent.covers(id_key(ids[1])) and not recent.covers(id_key(ids[0]))
    whole = Recent(max_entries=10)
    whole.backfill(redis, ids[-1])
    assert whole.covers((0, 0)) and [e[0] for e in whole.after((0, 0))] == ids


class Following(LiveFollower):
    """A follower that is never run: the test says where it is."""

    def __init__(self, redis, url):
        super().__init__(redis, url)


@pytest.fixture
def seam(redis, redis_server):
    return ReplaySeam(Following(redis, redis_server.url), Recent(max_entries=4))


def run(redis, seam, user, topics, last_id):
    """Every step of a replay of ``user`` from ``last_id``, and the topics it went live with."""
    live = []
    seam.hold("k", user, topics)
    found = list(replay.steps(redis, seam, "k", user, topics, last_id, live.append))
    return found, live


def ids_sent(found):
    return [i for event, payload in found if event == "notifications" for i, _t in payload]


def test_a_replay_from_redis_then_the_window_sends_each_once_in_order(redis, seam):
    bus = Bus(redis)
    ids = [bus.publish("news.a" if i % 3 else "other", f"n{i}") for i in range(10)]
    private = bus.publish("x", "for ann", user="ann")
    ids.append(private)
    seam.recent.backfill(redis, private)  # holds the newest 4: ids[-4:]
    seam.follower.advance(private)
    found, live = run(redis, seam, "ann", ["news"], ids[0])
    wanted = [i for n, i in enumerate(ids[1:], 1) if n % 3 or i == private]
    assert ids_sent(found) == wanted
    assert found[-1] == ("replayed", {"recovered": True, "count": len(wanted), "last_id": private})
    assert live == [["news"]]
    # The JSON sent is the stored JSON with its id.
    texts = {i: t for event, payload in found if event == "notifications" for i, t in payload}
    assert texts[private].startswith(f'{{"id":"{private}",') and '"for ann"' in texts[private]


def test_a_private_notification_of_a_former_account_is_not_replayed_from_the_window(redis, seam):
    bus = Bus(redis)
    old = bus.publish("x", "for the old carol", user="carol")
    redis.set("herald:born:carol", old)  # carol was created again after it
    new = bus.publish("x", "for the new carol", user="carol")
    seam.recent.backfill(redis, new)
    seam.follower.advance(new)
    found, _ = run(redis, seam, "carol", [], "0-0")
    assert ids_sent(found) == [new]


def test_what_the_relay_delivers_during_the_replay_is_handed_over_once(redis, seam):
    bus = Bus(redis)
    first = bus.publish("news.a", "before")
    seam.recent.backfill(redis, first)
    seam.follower.advance(first)
    seam.hold("k", "ann", ["news"])
    steps = replay.steps(redis, seam, "k", "ann", ["news"], "0-0", lambda topics: None)
    assert next(steps) == ("notifications", [(first, seam.recent.after((0, 0))[0][3])])
    later = bus.publish("news.a", "during")  # the relay delivers it while the page goes out
    seam.recent.add(id_key(later), later, "news.a", None, f'{{"id":"{later}"}}')
    seam.follower.advance(later)
    rest = list(steps)
    assert ids_sent(rest) == [later]
    assert rest[-1][1]["count"] == 2


def test_nothing_is_replayed_from_the_window_that_the_stream_no_longer_holds(redis, seam):
    """A stream replaced under a running process (Redis lost its data, say): what the
    window kept of the old one is not history any more."""
    bus = Bus(redis)
    old = bus.publish("news.a", "old")
    seam.recent.backfill(redis, old)
    redis.flushall()
    new = bus.publish("news.a", "new")
    seam.recent.add(id_key(new), new, "news.a", None, f'{{"id":"{new}"}}')
    seam.follower.advance(new)
    found, _ = run(redis, seam, "ann", ["news"], "0")
    assert ids_sent(found) == [new]


def test_an_entry_deleted_from_the_stream_is_not_replayed_from_the_window(redis, seam):
    """XDEL (an operator's: Herald only trims), in the window's stretch: the replay sends
    what the stream holds, as REST reads it; a later deletion of an older entry (the
    stream's greatest deleted id stays) is seen too."""
    bus = Bus(redis)
    ids = [bus.publish("news.a", f"n{i}") for i in range(4)]
    seam.recent.backfill(redis, ids[-1])  # the whole stream: replays from ids[0] read it
    seam.follower.advance(ids[-1])
    redis.xdel(STREAM, ids[2])
    assert ids_sent(run(redis, seam, "ann", ["news"], ids[0])[0]) == [ids[1], ids[3]]
    redis.xdel(STREAM, ids[1])
    assert ids_sent(run(redis, seam, "ann", ["news"], ids[0])[0]) == [ids[3]]


def test_the_window_reads_the_stream_again_only_after_a_deletion_reached_it(redis, seam):
    bus = Bus(redis)
    ids = [bus.publish("news.a", f"n{i}") for i in range(6)]
    redis.xdel(STREAM, ids[0])  # older than the window (it holds 4)
    seam.recent.backfill(redis, ids[-1])
    seam.follower.advance(ids[-1])
    reads = []
    seam.recent._drop_deleted = lambda client, deleted: reads.append(deleted)
    run(redis, seam, "ann", ["news"], "0")
    redis.xtrim(STREAM, maxlen=5, approximate=False)  # a trim: removed, nothing deleted
    run(redis, seam, "ann", ["news"], "0")
    assert reads == []
    redis.xdel(STREAM, ids[4])
    run(redis, seam, "ann", ["news"], "0")
    run(redis, seam, "ann", ["news"], "0")  # nothing removed since: not read again
    assert reads == [id_key(ids[4])]
