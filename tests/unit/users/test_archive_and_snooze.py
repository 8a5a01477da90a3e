"""app/users/archive_and_snooze.py: archive and snooze kept in Redis, and the waker every web process runs."""
import threading
import time

import pytest
import redis as redis_lib

from app.stream import control
from app.stream.keys import CONTROL, STREAM
from app.users import archive_and_snooze, read_state, snooze_schedule
from tests.support import wait_until


@pytest.fixture(autouse=True)
def history(redis):
    """A notification newer than every id these tests act on: only ids up to the newest
    can be archived, snoozed or marked (issue 23)."""
    redis.xadd(STREAM, {"topic": "t", "user": "", "envelope": b"{}"}, id="100000-0")


def later(ms=60_000):
    return int(time.time() * 1000) + ms


def test_each_due_snooze_is_woken_once_by_competing_wakers(redis_server, redis):
    until = later()
    ids = [f"{1000 + i}-0" for i in range(60)]
    for entry_id in ids:
        archive_and_snooze.snooze(redis, "ann", entry_id, until)
    woken, clients = [], [redis_server.client() for _ in range(3)]
    lock = threading.Lock()

    def waker(client):
        while True:
            got = archive_and_snooze.wake_due(client, now_ms=until, most=7)
            if not got:
                return
            with lock:
                woken.extend(got)
    threads = [threading.Thread(target=waker, args=(c,)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    for client in clients:
        client.close()
    assert sorted(woken) == sorted(("ann", i) for i in ids)  # each once, none lost
    assert archive_and_snooze.get(redis, "ann")["snoozed"] == {}


def test_a_snooze_woken_after_all_was_read_comes_back_unread(redis):
    read_state.apply(redis, "ann", ["9-0"], "5-0", [])
    archive_and_snooze.snooze(redis, "ann", "3-0", later())
    archive_and_snooze.snooze(redis, "ann", "9-0", later())
    assert archive_and_snooze.wake_due(redis, now_ms=later(120_000)) == [("ann", "3-0"), ("ann", "9-0")]
    state = read_state.get(redis, "ann")
    assert not read_state.is_read(state, "3-0") and not read_state.is_read(state, "9-0")


def test_a_waker_that_dies_before_marking_unread_leaves_the_snooze_to_be_woken_again(
        redis, monkeypatch):
    """Claiming a due snooze and marking it unread are two steps: a process dying
    between them (here: the second step raises) must not bring it back read."""
    read_state.apply(redis, "ann", [], "5-0", [])  # all read, 3-0 included
    until = later()
    archive_and_snooze.snooze(redis, "ann", "3-0", until)
    real = read_state.apply

    def dies(*args, **kwargs):
        raise SystemExit("the process died here")
    monkeypatch.setattr(read_state, "apply", dies)
    with pytest.raises(SystemExit):
        archive_and_snooze.wake_due(redis, now_ms=until)
    monkeypatch.setattr(read_state, "apply", real)
    assert archive_and_snooze.wake_due(redis, now_ms=until + 1) == []  # claimed: not twice at once
    after = until + archive_and_snooze.CLAIM_MS + 1  # the dead claim's lease is over
    assert archive_and_snooze.wake_due(redis, now_ms=after) == [("ann", "3-0")]
    assert not read_state.is_read(read_state.get(redis, "ann"), "3-0")
    assert archive_and_snooze.get(redis, "ann")["snoozed"] == {}
    assert archive_and_snooze.wake_due(redis, now_ms=after + 10**9) == []  # finished: once only


def test_snoozed_again_while_being_woken_keeps_the_new_time(redis, monkeypatch):
    until = later()
    archive_and_snooze.snooze(redis, "ann", "3-0", until)
    real, again = read_state.apply, until + 3_600_000

    def snoozed_meanwhile(*args, **kwargs):
        archive_and_snooze.snooze(redis, "ann", "3-0", again)
        return real(*args, **kwargs)
    monkeypatch.setattr(read_state, "apply", snoozed_meanwhile)
    assert archive_and_snooze.wake_due(redis, now_ms=until) == [("ann", "3-0")]
    monkeypatch.setattr(read_state, "apply", real)
    assert archive_and_snooze.wake_due(redis, now_ms=again) == [("ann", "3-0")]


def test_unsnoozing_by_hand_leaves_the_read_state_alone(redis):
    read_state.apply(redis, "ann", [], "5-0", [])
    archive_and_snooze.snooze(redis, "ann", "3-0", later())
    archive_and_snooze.unsnooze(redis, "ann", "3-0")
    assert read_state.is_read(read_state.get(redis, "ann"), "3-0")
    assert archive_and_snooze.wake_due(redis, now_ms=later(120_000)) == []  # nothing left to wake


def test_snoozing_again_moves_the_time(redis):
    archive_and_snooze.snooze(redis, "ann", "3-0", later(1000))
    second = later(7_200_000)
    archive_and_snooze.snooze(redis, "ann", "3-0", second)
    assert archive_and_snooze.get(redis, "ann")["snoozed"] == {"3-0": second}
    assert archive_and_snooze.wake_due(redis, now_ms=later(3_600_000)) == []
    assert archive_and_snooze.wake_due(redis, now_ms=second) == [("ann", "3-0")]


def test_a_user_id_holding_a_tab_wakes_its_own_snooze(redis):
    """The shared schedule keeps ``user<TAB>id``: a user id may hold a tab (any string),
    an entry id never does, so the id is what follows the last tab."""
    for user in ("ann\t5-0", "ann", "user:42\t"):
        archive_and_snooze.snooze(redis, user, "3-0", later(1000))
    woken = archive_and_snooze.wake_due(redis, now_ms=later(60_000))
    assert sorted(woken) == [("ann", "3-0"), ("ann\t5-0", "3-0"), ("user:42\t", "3-0")]
    for user in ("ann\t5-0", "ann", "user:42\t"):
        assert archive_and_snooze.get(redis, user)["snoozed"] == {}
        assert not read_state.is_read(read_state.get(redis, user), "3-0")


def test_forgetting_a_users_snoozes_leaves_those_of_ids_it_begins(redis):
    archive_and_snooze.snooze(redis, "ann", "3-0", later())
    archive_and_snooze.snooze(redis, "ann\tx", "4-0", later())
    archive_and_snooze.forget_snoozes(redis, "ann")
    assert redis.zrange(archive_and_snooze.SNOOZES, 0, -1) == [b"ann\tx\t4-0"]


def test_the_archive_keeps_the_newest_ids_archived(redis, monkeypatch):
    monkeypatch.setattr(archive_and_snooze, "MAX_KEPT", 3)
    for entry_id in ("1-0", "2-0", "3-0", "4-0", "5-0"):
        archive_and_snooze.archive(redis, "ann", [entry_id])
        time.sleep(0.002)  # archived at different milliseconds
    assert archive_and_snooze.get(redis, "ann")["archived"] == ["3-0", "4-0", "5-0"]


def test_the_waker_outlives_redis_errors_and_bugs(redis, monkeypatch):
    archive_and_snooze.snooze(redis, "ann", "3-0", later(1_000))  # due in a second: past any call's own delay
    calls, real = [], archive_and_snooze.wake_due

    def flaky(client):
        calls.append(len(calls))
        if len(calls) == 1:
            raise redis_lib.ConnectionError("Redis away")
        if len(calls) == 2:
            raise RuntimeError("a bug")
        return real(client, now_ms=later(60_000))
    monkeypatch.setattr(archive_and_snooze, "wake_due", flaky)
    archive_and_snooze.keep_waking(redis, lambda: len(calls) < 3, sleep=lambda _s: None)
    assert len(calls) == 3
    assert archive_and_snooze.get(redis, "ann")["snoozed"] == {}


@pytest.mark.parametrize("call, field", [
    (lambda r: archive_and_snooze.archive(r, "ann", ["x"]), "archive[0]"),
    (lambda r: archive_and_snooze.archive(r, "ann", [], archived=False), "unarchive"),
    (lambda r: archive_and_snooze.snooze(r, "ann", "1-0", 5), "snooze.until"),
    (lambda r: archive_and_snooze.snooze(r, "ann", 5, later()), "snooze.id"),
    (lambda r: archive_and_snooze.unsnooze(r, "ann", None), "unsnooze"),
])
def test_errors_name_the_field(redis, call, field):
    with pytest.raises(archive_and_snooze.StateError) as caught:
        call(redis)
    assert caught.value.field == field and str(caught.value).startswith(f"{field}: ")


def test_ids_newer_than_the_newest_notification_are_not_archived_or_snoozed(redis):
    """The sibling of read state's bound (issue 23): an id from the future would hide a
    notification not yet published. Archive leaves such ids out of the change; a snooze
    of one is refused by name."""
    redis.delete(STREAM)
    redis.xadd(STREAM, {"topic": "t", "user": "", "envelope": b"{}"}, id="5-0")
    far = "18446744073709551615-18446744073709551615"
    assert archive_and_snooze.archive(redis, "ann", ["5-0", far, "5-1"]) == {"archived": ["5-0"]}
    assert archive_and_snooze.get(redis, "ann")["archived"] == ["5-0"]
    # Only future ids: nothing applied (a ZADD of nothing was a 500, found by the REST fuzzer).
    assert archive_and_snooze.archive(redis, "ann", [far]) == {"archived": []}
    with pytest.raises(archive_and_snooze.StateError) as refused:
        archive_and_snooze.snooze(redis, "ann", far, later())
    assert refused.value.field == "snooze.id" and "newer than" in str(refused.value)
    assert archive_and_snooze.get(redis, "ann")["snoozed"] == {}


def test_a_schedule_entry_with_no_snooze_behind_it_is_dropped_unwoken(redis):
    """A snooze writes the schedule, then the user's set (another hash slot on a cluster):
    a process that died between them left only the first; unsnoozing and deleting a user
    leave the schedule last. The waker finds nothing behind such an entry and drops it,
    leaving the read state alone."""
    read_state.apply(redis, "ann", [], "5-0", [])
    until = later()
    snooze_schedule.add(redis, "ann", ["3-0"], until)  # the second step never ran
    assert archive_and_snooze.wake_due(redis, now_ms=until) == []
    assert read_state.is_read(read_state.get(redis, "ann"), "3-0")
    assert redis.zrange(archive_and_snooze.SNOOZES, 0, -1) == []


def test_a_schedule_entry_earlier_than_the_users_own_time_moves_to_it(redis):
    """Snoozed until later, then snoozed again sooner by a process that died after the
    schedule's step: the user's set is the truth, and the schedule follows it."""
    first, sooner = later(7_200_000), later(60_000)
    archive_and_snooze.snooze(redis, "ann", "3-0", first)
    snooze_schedule.add(redis, "ann", ["3-0"], sooner)
    assert archive_and_snooze.wake_due(redis, now_ms=sooner) == []
    assert redis.zscore(archive_and_snooze.SNOOZES, "ann\t3-0") == first
    assert archive_and_snooze.get(redis, "ann")["snoozed"] == {"3-0": first}
    assert archive_and_snooze.wake_due(redis, now_ms=first) == [("ann", "3-0")]


def test_each_change_is_announced(redis):
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(CONTROL)
    until = later()
    archive_and_snooze.archive(redis, "ann", ["3-0"])
    archive_and_snooze.snooze(redis, "ann", "4-0", until)
    archive_and_snooze.unsnooze(redis, "ann", "4-0")
    archive_and_snooze.snooze(redis, "ann", "5-0", until)
    archive_and_snooze.wake_due(redis, now_ms=until)
    heard = []

    def states():
        while (message := pubsub.get_message(timeout=0.05)) is not None:
            decoded = control.decode(message["data"])
            if decoded.kind == control.STATE:
                heard.append(decoded.data)
        return len(heard) == 5
    wait_until(states, message="five state announcements")
    pubsub.close()
    assert heard == [{"archived": ["3-0"]}, {"snoozed": {"4-0": until}}, {"unsnoozed": ["4-0"]},
                     {"snoozed": {"5-0": until}}, {"unsnoozed": ["5-0"], "woke": ["5-0"]}]
