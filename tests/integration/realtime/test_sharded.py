"""A sharded history (STREAM_SHARDS=3) end to end: where notifications are kept, live
delivery from every shard, and exact replay from one cursor of a position per shard,
over Socket.IO, Server-Sent Events and REST."""
import pytest
import requests

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.conftest import SESSION_SHARDS
from tests.redis_cluster import node_of
from tests.support import EventStream, Listener, LiveServer, marked, wait_until


def topic_in(shards, index, stem="t"):
    """A topic (``<stem><n>.x``) whose first segment falls in shard ``index``."""
    for n in range(1000):
        topic = f"{stem}{n}.x"
        if shards.of_topic(topic).index == index:
            return topic
    raise AssertionError(f"no topic in shard {index}")


@pytest.fixture
def spread(sharded, redis):
    """ann, subscribed to one topic of each shard; returns ({shard: topic}, bus)."""
    accounts.create_user(redis, "ann", "ann-password")
    topics = {k: topic_in(sharded, k) for k in range(sharded.count)}
    subscriptions.add(redis, "ann", [t.split(".")[0] for t in topics.values()], limit=10)
    return topics, Bus(redis)


def test_each_shard_keeps_its_own_and_an_id_says_which(sharded, redis, spread):
    topics, bus = spread
    ids = {k: bus.publish(topic, f"in {k}") for k, topic in topics.items()}
    private = bus.publish(topics[0], "ann's", user="ann")
    for k, entry_id in ids.items():
        shard, at = sharded.locate(entry_id)
        assert shard.index == k and entry_id == shard.public(at)
        assert redis.xrange(shard.stream, min=at, max=at)  # in its shard's stream
    assert sharded.locate(private)[0] == sharded.of_user("ann")
    assert ids[0].count("-") == 1 and ids[1].endswith("-1") and ids[2].endswith("-2")


def test_a_list_over_shards_is_written_shard_by_shard_in_order(sharded, redis, spread):
    topics, bus = spread
    envelopes = [{"topic": topics[k % 3], "title": f"n{k}"} for k in range(7)]
    published, replayed = bus.publish_envelopes(envelopes, idempotency_key="list-1")
    again, replayed_again = bus.publish_envelopes(envelopes, idempotency_key="list-1")
    assert not replayed and replayed_again and again == published
    ids = [p["id"] for p in published["notifications"]]
    assert [sharded.locate(i)[0].index for i in ids] == [k % 3 for k in range(7)]
    assert sum(redis.xlen(s.stream) for s in sharded) == 7  # none written twice


def _cursor_after(shards, cursor, envelopes):
    positions = shards.parse(cursor)[0]
    for envelope in envelopes:
        positions = shards.advance(positions, envelope["id"])
    return shards.format(positions)


def test_live_from_every_shard_then_an_exact_replay_from_the_cursor(sharded, spread,
                                                                     live_server):
    topics, bus = spread
    token = live_server.token("ann", "ann-password")
    first = Listener(live_server, token)
    try:
        wait_until(lambda: first.replays, message="replayed")
        assert first.replays[0]["last_id"].count("_") == 2  # a position per shard
        live = [bus.publish(topics[k], f"live {k}") for k in (0, 1, 2, 2, 1)]
        wait_until(lambda: len(first.received) == 5, message="live from every shard")
        assert sorted(first.ids()) == sorted(live)
        cursor = _cursor_after(sharded, first.replays[0]["last_id"], first.received)
    finally:
        first.close()
    missed = [bus.publish(topics[k], f"missed {k}") for k in (2, 0, 1, 0)]
    bus.publish("elsewhere", "not ann's")
    again = Listener(live_server, token, last_id=cursor)
    try:
        wait_until(lambda: again.replays, message="replayed")
        marker = marked(bus.publish, again, "ann")
        replayed = [i for i in again.ids() if i != marker]
        assert sorted(replayed) == sorted(missed) and len(replayed) == len(missed)
        for k in range(3):  # each shard in id order
            mine = [i for i in replayed if sharded.locate(i)[0].index == k]
            assert mine == [i for i in missed if sharded.locate(i)[0].index == k]
        assert again.replays[0]["recovered"] is True and again.resets == []
        assert again.replays[0]["count"] == len(missed)
    finally:
        again.close()


def test_a_single_id_from_before_the_shards_is_a_reset(sharded, spread, live_server):
    topics, bus = spread
    old = bus.publish(topics[1], "before")
    bus.publish(topics[2], "after")
    listener = Listener(live_server, live_server.token("ann", "ann-password"), last_id=old)
    try:
        wait_until(lambda: listener.replays, message="replayed")
        assert listener.resets and listener.replays[0]["recovered"] is False
        assert listener.replays[0]["last_id"].count("_") == 2
    finally:
        listener.close()


def test_server_sent_events_carry_the_cursor_and_resume_exactly(sharded, spread, live_server):
    topics, bus = spread
    token = live_server.token("ann", "ann-password")
    stream = EventStream(live_server, token)
    try:
        name, _id, replayed = stream.next_event()
        assert name == "replayed"
        sent = [bus.publish(topics[k], f"sse {k}") for k in (1, 2, 0)]
        events = [stream.next_event() for _ in sent]
    finally:
        stream.close()
    assert sorted(data["id"] for _n, _i, data in events) == sorted(sent)
    last_event_id = events[-1][1]
    assert last_event_id == _cursor_after(sharded, replayed["last_id"],
                                          [data for _n, _i, data in events])
    missed = [bus.publish(topics[k], f"missed {k}") for k in (0, 2)]
    resumed = EventStream(live_server, token, header_last_id=last_event_id)
    try:
        seen = resumed.events_until("replayed")
        got = [data["id"] for name, _i, data in seen if name == "message"]
        # One its shard's relay had not read yet when the replay ran comes live, after
        # `replayed`: the contract is no gap and no duplicate, not all before `replayed`.
        for _ in range(10):
            if len(got) >= len(missed):
                break
            name, _i, data = resumed.next_event()
            if name == "message":
                got.append(data["id"])
    finally:
        resumed.close()
    assert sorted(got) == sorted(missed)
    assert seen[-1][2]["recovered"] is True


def test_rest_pages_over_the_shards_miss_nothing_and_repeat_nothing(sharded, spread,
                                                                    live_server):
    topics, bus = spread
    published = [bus.publish(topics[k % 3], f"n{k}") for k in range(23)]
    headers = {"Authorization": f"Bearer {live_server.token('ann', 'ann-password')}"}
    url = live_server.url + "/api/notifications"
    seen, after = [], "0"
    for _ in range(20):
        page = requests.get(url, params={"after": after, "limit": 5}, headers=headers,
                            timeout=5).json()
        seen += [n["id"] for n in page["notifications"]]
        if not page["notifications"]:
            break
        after = page["last_id"]
    assert sorted(seen) == sorted(published) and len(seen) == len(published)
    back, before = [], None
    for _ in range(20):
        params = {"limit": 4} if before is None else {"limit": 4, "before": before}
        page = requests.get(url, params=params, headers=headers, timeout=5).json()
        back += [n["id"] for n in page["notifications"]]
        before = page["next_before"]
        if before is None:
            break
    assert sorted(back) == sorted(published) and len(back) == len(published)
    newer = bus.publish(topics[2], "newer")
    page = requests.get(url, params={"after": after}, headers=headers, timeout=5).json()
    assert [n["id"] for n in page["notifications"]] == [newer]


@pytest.mark.skipif(SESSION_SHARDS > 1, reason="about one shard; this session has more")
def test_a_cursor_of_another_form_is_refused_with_one_shard(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    headers = {"Authorization": f"Bearer {live_server.token('ann', 'ann-password')}"}
    answer = requests.get(live_server.url + "/api/notifications",
                          params={"after": "1-0_2-0_3-0"}, headers=headers, timeout=5)
    assert answer.status_code == 400 and answer.json()["field"] == "after"


def test_a_web_process_follows_only_the_shards_its_connections_need(sharded, redis,
                                                                   live_server):
    accounts.create_user(redis, "ann", "ann-password")
    mine = sharded.of_user("ann").index
    other = next(k for k in range(sharded.count) if k != mine)
    third = next(k for k in range(sharded.count) if k not in (mine, other))
    subscriptions.add(redis, "ann", [topic_in(sharded, other).split(".")[0]], limit=10)

    def followed():  # asked of the node that holds each shard's channel, on a cluster
        return {k for k in range(sharded.count) if node_of(redis, sharded[k].live)
                .execute_command("PUBSUB", "SHARDNUMSUB", sharded[k].live)[1]}

    assert followed() == set()  # no connection yet: no shard followed
    listener = Listener(live_server, live_server.token("ann", "ann-password"))
    try:
        wait_until(lambda: listener.replays, message="replayed")
        wait_until(lambda: followed() == {mine, other}, message="the shards it needs")
        late = topic_in(sharded, third, stem="late")
        answer = listener.call("subscribe", {"topics": [late.split(".")[0]]})
        assert answer["ok"]
        # Its lane knew where it starts before the answer: what follows reaches it.
        sent = Bus(redis).publish(late, "in the shard followed last")
        wait_until(lambda: followed() == {mine, other, third}, message="the new shard")
        wait_until(lambda: sent in listener.ids(), message="the new shard's notification")
    finally:
        listener.close()


def test_changes_told_on_herald_control_reach_the_tabs(sharded, spread, live_server):
    """herald:control is followed on its own beside the shards' lanes."""
    topics, bus = spread
    token = live_server.token("ann", "ann-password")
    listener = Listener(live_server, token)
    try:
        sent = bus.publish(topics[2], "to read")
        wait_until(lambda: sent in listener.ids(), message="the notification")
        changed = requests.post(live_server.url + "/api/read-state", json={"ids": [sent]},
                                headers={"Authorization": f"Bearer {token}"}, timeout=5)
        assert changed.status_code == 200, changed.text
        wait_until(lambda: listener.reads, message="the read event")
        assert sent in listener.reads[0]["ids"]
    finally:
        listener.close()


def test_a_fresh_cursor_is_not_at_the_start_of_shards_not_followed(sharded, redis, redis_server,
                                                                  tmp_path):
    """A shard no connection needs is not followed, yet a cursor given out holds a
    position there near its newest, not 0-0 (which would replay all of that shard to a
    client that comes to need it before anything there reached it)."""
    accounts.create_user(redis, "ann", "ann-password")
    mine = sharded.of_user("ann").index
    spare = next(k for k in range(sharded.count) if k != mine)
    before = Bus(redis).publish(topic_in(sharded, spare), "before the process started")
    server = LiveServer(redis_server.url, tmp_path)
    server.start()
    try:
        listener = Listener(server, server.token("ann", "ann-password"))
        try:
            wait_until(lambda: listener.replays, message="replayed")
            positions = sharded.parse(listener.replays[0]["last_id"])[0]
            assert positions[spare] == sharded.locate(before)[1]
        finally:
            listener.close()
    finally:
        server.stop()
