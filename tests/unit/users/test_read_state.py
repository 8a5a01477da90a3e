"""Per-user read state: the module and its REST endpoints (its Socket.IO event, on a live
server: tests/integration/users/test_read_state.py)."""

import pytest

from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.users import read_state
from tests.support import issue_token

NEWEST = "100000-0"  # the ids these tests mark are older than this notification


def bare(state):
    """A state or change without its version (checked on its own below) and without
    ``seen`` while nothing was seen (test_seen_only_moves_forward checks it)."""
    return {key: value for key, value in state.items()
            if key != "version" and not (key == "seen" and value is None)}


@pytest.fixture(autouse=True)
def history(redis):
    """A notification newer than every id marked here: only ids up to it can be read."""
    Bus(redis).client.xadd(STREAM, {"topic": "t", "user": "", "envelope": b"{}"}, id=NEWEST)


def test_mark_ids_then_all(redis):
    assert bare(read_state.get(redis, "ann")) == {"upto": None, "ids": [], "unread": []}
    change = read_state.mark(redis, "ann", {"ids": ["5-0", "3-1", "3-1"]})
    assert bare(change) == {"upto": None, "ids": ["3-1", "5-0"], "unread": []}
    assert bare(read_state.get(redis, "ann")) == {"upto": None, "ids": ["3-1", "5-0"], "unread": []}
    change = read_state.mark(redis, "ann", {"upto": "4-0"})
    assert bare(change) == {"upto": "4-0", "ids": [], "unread": []}
    assert bare(read_state.get(redis, "ann")) == {"upto": "4-0", "ids": ["5-0"], "unread": []}
    # The watermark never goes back, and ids under it are not kept.
    assert bare(read_state.mark(redis, "ann", {"upto": "2-0", "ids": ["1-0", "9-0"]})) == {
        "upto": "4-0", "ids": ["1-0", "9-0"], "unread": []}
    assert bare(read_state.get(redis, "ann")) == {"upto": "4-0", "ids": ["5-0", "9-0"], "unread": []}
    assert bare(read_state.get(redis, "bob")) == {"upto": None, "ids": [], "unread": []}


def test_id_order_is_numeric_not_textual(redis):
    read_state.mark(redis, "ann", {"ids": ["10-0", "9-0", "9-10", "9-2"]})
    assert read_state.get(redis, "ann")["ids"] == ["9-0", "9-2", "9-10", "10-0"]
    read_state.mark(redis, "ann", {"upto": "9-2"})
    assert bare(read_state.get(redis, "ann")) == {"upto": "9-2", "ids": ["9-10", "10-0"], "unread": []}


@pytest.mark.parametrize("data,words", [
    (None, "payload"), ({}, "payload"), ({"ids": "1-0"}, "ids: "),
    ({"ids": ["x"]}, "ids[0]: "), ({"upto": 5}, "upto: "), ({"ids": [], "all": 1}, "all: "),
    ({"ids": ["1-0"] * 501}, "ids: "),
])
def test_bad_changes_are_refused_naming_the_field(redis, data, words):
    with pytest.raises(read_state.ReadStateError, match=words.replace("[", r"\[")):
        read_state.mark(redis, "ann", data)
    assert bare(read_state.get(redis, "ann")) == {"upto": None, "ids": [], "unread": []}


def test_every_change_has_the_next_version_and_the_state_says_its_own(redis):
    """The version orders changes: a tab leaves an announcement older than its own
    answered change alone (static/js/collections/notifications.js)."""
    assert read_state.get(redis, "ann")["version"] == 0
    versions = [read_state.mark(redis, "ann", change)["version"]
                for change in ({"ids": ["3-0"]}, {"unread": ["3-0"]}, {"upto": "2-0"}, {"upto": "1-0"})]
    assert versions == [1, 2, 3, 4]  # a change that changes nothing is counted too
    assert read_state.get(redis, "ann")["version"] == 4
    assert read_state.get(redis, "bob")["version"] == 0


def bearer(name):
    return {"Authorization": f"Bearer {issue_token(name)}"}


def test_rest_endpoints(client, user, api_key):
    name = user[0]
    reply = client.post("/api/read-state", headers=bearer(name), json={"ids": ["7-0"]})
    assert reply.status_code == 200
    assert reply.get_json() == {"upto": None, "ids": ["7-0"], "unread": [], "seen": None, "version": 1}
    reply = client.get("/api/read-state", headers=bearer(name))
    assert reply.get_json() == {"upto": None, "ids": ["7-0"], "unread": [], "seen": None, "version": 1}
    reply = client.post("/api/read-state", headers=bearer(name), json={"upto": "bad"})
    assert reply.status_code == 400 and reply.get_json()["error"].startswith("upto: ")
    assert client.get("/api/read-state").status_code == 401
    assert client.get("/api/read-state", headers={"Authorization": f"Bearer {api_key}"}).status_code == 403


def test_marking_unread_again_below_and_above_the_watermark(redis):
    read_state.mark(redis, "ann", {"upto": "5-0", "ids": ["7-0", "8-0"]})
    change = read_state.mark(redis, "ann", {"unread": ["3-0", "7-0"]})
    assert bare(change) == {"upto": "5-0", "ids": [], "unread": ["3-0", "7-0"]}
    state = read_state.get(redis, "ann")
    assert bare(state) == {"upto": "5-0", "ids": ["8-0"], "unread": ["3-0"]}
    assert not read_state.is_read(state, "3-0") and read_state.is_read(state, "4-0")
    assert not read_state.is_read(state, "7-0") and read_state.is_read(state, "8-0")
    read_state.mark(redis, "ann", {"ids": ["3-0"]})  # read once more
    assert read_state.get(redis, "ann")["unread"] == []
    read_state.mark(redis, "ann", {"unread": ["4-0"]})
    read_state.mark(redis, "ann", {"upto": "9-0"})  # mark all read ends every exception
    assert bare(read_state.get(redis, "ann")) == {"upto": "9-0", "ids": [], "unread": []}


def test_ids_newer_than_the_newest_notification_are_not_applied(redis):
    """Marking up to the greatest id made every later notification read, forever (issue 23):
    ``upto`` is clamped to the newest notification, and newer ``ids``/``unread`` are left out."""
    far = "18446744073709551615-18446744073709551615"
    change = read_state.mark(redis, "ann", {"upto": far, "ids": ["5-0", far, "100000-1"],
                                            "unread": ["100001-0"]})
    assert bare(change) == {"upto": NEWEST, "ids": ["5-0"], "unread": []}  # 5-0: read, under upto
    assert bare(read_state.get(redis, "ann")) == {"upto": NEWEST, "ids": [], "unread": []}
    later = Bus(redis).publish("t", "later")
    assert not read_state.is_read(read_state.get(redis, "ann"), later)
    assert read_state.mark(redis, "ann", {"ids": [later]})["ids"] == [later]


def test_with_no_history_nothing_can_be_marked(redis):
    redis.delete(STREAM)
    assert bare(read_state.mark(redis, "ann", {"upto": "5-0", "ids": ["1-0"]})) == {
        "upto": None, "ids": [], "unread": []}


def test_seen_only_moves_forward_and_never_past_the_newest(redis):
    """Everything up to ``seen`` was shown: the badge counts only what is newer."""
    assert read_state.get(redis, "ann")["seen"] is None
    assert read_state.mark(redis, "ann", {"seen": "7-0"})["seen"] == "7-0"
    assert read_state.mark(redis, "ann", {"seen": "5-0"})["seen"] == "7-0"  # never back
    assert read_state.mark(redis, "ann", {"seen": "999999-0"})["seen"] == NEWEST  # clamped
    state = read_state.get(redis, "ann")
    assert state["seen"] == NEWEST
    assert bare(state) == {"upto": None, "ids": [], "unread": [], "seen": NEWEST}, \
        "seeing is not reading"
    assert read_state.get(redis, "bob")["seen"] is None
    with pytest.raises(read_state.ReadStateError, match="seen: "):
        read_state.mark(redis, "ann", {"seen": "soon"})
