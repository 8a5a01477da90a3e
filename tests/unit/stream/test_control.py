"""The herald:control messages (app.stream.control): each kind written and read back,
the formats as they go over the wire, and what cannot be read."""
import logging

import orjson
import pytest

from app.stream import control
from app.stream.control import Message, Subscriptions

READ_CHANGE = {"upto": "3-0", "ids": ["4-0", "5-2"], "unread": ["2-0"]}
STATE_CHANGE = {"archived": ["1-0"], "snoozed": {"5-2": 1795689200000}}


def test_each_kind_written_in_python_reads_back():
    assert control.decode(control.revoked("ann")) == Message(control.REVOKED, "ann", None)
    assert control.decode(control.read("ann", READ_CHANGE)) == Message(control.READ, "ann", READ_CHANGE)
    assert control.decode(control.state("ann", STATE_CHANGE)) == Message(control.STATE, "ann", STATE_CHANGE)
    assert control.decode(control.subscriptions("ann", "add", ["b", "a"], ["a", "b", "c"])) == \
        Message(control.SUBSCRIPTIONS, "ann", Subscriptions(["b", "a"], [], ["a", "b", "c"]))
    assert control.decode(control.subscriptions("ann", "remove", ["c"], [])) == \
        Message(control.SUBSCRIPTIONS, "ann", Subscriptions([], ["c"], []))
    assert control.decode(control.presence("bob", False, 1000500)) == \
        Message(control.PRESENCE, "bob", {"user": "bob", "online": False, "at": 1000500})


def test_the_formats_written_in_python_are_byte_for_byte_those_of_before():
    """Web processes of two versions share one Redis during a rolling deploy."""
    assert control.revoked("ann") == b'{"user":"ann","revoked":true}'
    assert control.read("ann", {"upto": None, "ids": ["1-0"], "unread": []}) == \
        b'{"user":"ann","read":{"upto":null,"ids":["1-0"],"unread":[]}}'
    assert control.state("ann", {"unarchived": ["1-0"]}) == b'{"user":"ann","state":{"unarchived":["1-0"]}}'


def lua(redis, snippet, call, *args):
    return redis.eval(snippet + f"return {call}", 0, *args)


def test_the_lua_encoders_write_what_python_writes(redis):
    """The scripts' messages (keys in cjson's order) decode as the Python ones do."""
    written = lua(redis, control.SUBSCRIPTIONS_LUA,
                  "control_subscriptions(ARGV[1], ARGV[2], {ARGV[3]}, {ARGV[3], ARGV[4]})",
                  "ann", "add", "a", "b")
    assert orjson.loads(written) == orjson.loads(control.subscriptions("ann", "add", ["a"], ["a", "b"]))
    assert control.decode(written) == \
        Message(control.SUBSCRIPTIONS, "ann", Subscriptions(["a"], [], ["a", "b"]))
    # cjson writes the empty list left by the last removal as {}: it reads back as [].
    emptied = lua(redis, control.SUBSCRIPTIONS_LUA, "control_subscriptions(ARGV[1], ARGV[2], {ARGV[3]}, {})",
                  "ann", "remove", "a")
    assert orjson.loads(emptied)["topics"] == {}
    assert control.decode(emptied) == Message(control.SUBSCRIPTIONS, "ann", Subscriptions([], ["a"], []))
    for online in ("true", "false"):
        written = lua(redis, control.PRESENCE_LUA, f"control_presence(ARGV[1], {online}, 1000500)", "bob")
        assert orjson.loads(written) == orjson.loads(control.presence("bob", online == "true", 1000500))
        assert control.decode(written).data == {"user": "bob", "online": online == "true", "at": 1000500}


def test_a_subscription_change_from_an_older_process_has_no_full_list():
    assert control.decode(b'{"user":"ann","add":["x"]}') == \
        Message(control.SUBSCRIPTIONS, "ann", Subscriptions(["x"], [], None))


def test_kinds_are_told_apart_in_the_relay_s_order():
    both = orjson.dumps({"user": "ann", "revoked": True, "read": READ_CHANGE, "add": ["x"]})
    assert control.decode(both).kind == control.READ
    assert control.decode(b'{"user":"ann","revoked":true,"add":["x"]}').kind == control.REVOKED
    assert control.decode(b'{"user":"ann","revoked":false,"add":["x"]}').kind == control.SUBSCRIPTIONS


@pytest.mark.parametrize("raw", [
    b"", b"not json", b"\xff\xfe", b"null", b"[1, 2]", b'"ann"', None, 42,
    b'{"revoked":true}', b'{"user":5,"revoked":true}', b'{"user":"","revoked":true}',
    b'{"user":"ann"}', b'{"user":"ann","revoked":false}', b'{"user":"ann","read":[1]}',
    b'{"user":"ann","state":"archived"}', b'{"user":"ann","presence":{"user":"ann"}}',
    b'{"user":"ann","presence":{"user":"ann","online":true,"at":"now"}}',
    b'{"user":"ann","add":"news"}', b'{"user":"ann","remove":[1]}', b'{"user":"ann","add":["x"],"topics":3}',
])
def test_what_cannot_be_read_is_unknown_and_says_why(raw):
    message = control.decode(raw)
    assert message.kind == control.UNKNOWN
    assert isinstance(message.data, str) and message.data


def test_dispatch_calls_the_handler_of_each_kind():
    seen, unknown = [], []
    dispatch = control.Dispatch(unknown=unknown.append)
    dispatch.on(control.READ, lambda m: seen.append(("read", m.user)))
    dispatch.on(control.REVOKED, lambda m: seen.append(("revoked", m.user)))
    for raw in (control.read("ann", READ_CHANGE), b"garbage", control.revoked("bob"),
                control.presence("cy", True, 1)):  # presence: no handler, ignored
        dispatch(control.decode(raw))
    assert seen == [("read", "ann"), ("revoked", "bob")]
    assert [m.kind for m in unknown] == [control.UNKNOWN]
    with pytest.raises(ValueError):
        dispatch.on("reed", print)


def test_an_unknown_message_is_logged_by_default(caplog):
    with caplog.at_level(logging.WARNING, logger="herald.control"):
        control.Dispatch()(control.decode(b"garbage"))
    assert "ignored a herald:control message: not JSON" in caplog.text
