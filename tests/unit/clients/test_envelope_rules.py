"""The Python client refuses, at the call, exactly what Herald refuses (issue 35).

herald_client/envelope.py checks a notification where the host app makes it, because one
published through the outbox reaches Herald only later, from the relay, where a refusal
can no longer be told to the code at fault. So over a table of values the client's
``check`` and Herald's own rules must agree: Herald here is everything a notification goes
through, on the Python API (``validate`` and ``encode``, as Bus.publish) and over the wire
(the JSON ``requests`` sends, read by strict_json, then the same), and a notification is
Herald's only if both take it. Anything else Herald raises counts as a refusal (nothing
is stored), but the table says which rows those are.
"""
import copy
import json
import math
import random
import struct

import orjson
import pytest

from app.stream import envelope as server_rules
from app.stream import strict_json
from app.stream.field_rules import EnvelopeError
from herald_client import InvalidNotification
from herald_client import envelope as client_rules

TS = "2026-11-21T18:00:00.123Z"


def herald_takes(envelope):
    """True when Herald stores ``envelope`` (as the client would send it), else what
    refused it."""
    if "user" in envelope:
        envelope = dict(envelope, user=client_rules.user_id(envelope["user"]))
    try:
        server_rules.encode(server_rules.validate(copy.deepcopy(envelope)), TS)
        body = json.dumps(envelope, allow_nan=False)  # as requests encodes a json= body
        server_rules.encode(server_rules.validate(strict_json.loads(body)), TS)
    except (EnvelopeError, strict_json.JSONError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a crash in Herald (a 500): nothing stored either
        return f"crashed: {type(exc).__name__}: {exc}"
    return True


def client_takes(envelope):
    try:
        client_rules.check(envelope)
    except InvalidNotification as exc:
        return f"{exc.field}: {exc}"
    return True


def nested(levels, kind=dict):
    """``data`` whose depth, counted as Herald counts it (field_rules.depth), is ``levels``:
    ``levels - 1`` containers inside it and a number in the innermost."""
    value = 1
    for _ in range(levels - 2):
        value = {"a": value} if kind is dict else [value]
    return {"a": value}


def sized(value, count, size):
    """``data`` holding ``count`` copies of float ``value`` that Herald encodes in exactly
    ``size`` bytes (Python's json writes some floats longer, some shorter)."""
    data = {"f": [value] * count, "p": ""}
    data["p"] = "x" * (size - len(orjson.dumps(data)))
    assert len(orjson.dumps(data)) == size
    return data


BASE = {"topic": "ops.db", "title": "Disk"}
ROWS = [
    ("plain", {}),
    ("every field", {"body": "b\n\tc", "severity": "critical", "user": "u:1", "origin": "ab12",
                     "correlation_id": "c", "url": "https://x.example/a", "kind": "data",
                     "data": {"k": [1, 2.5, None, True, "é"]}}),
    ("user as an int", {"user": 7}),
    ("user True", {"user": True}),
    ("user empty", {"user": ""}),
    ("user of 256", {"user": "u" * 256}),
    ("user with a surrogate", {"user": "a\ud800"}),
    ("title with a surrogate", {"title": "a\udfff"}),
    ("body with a surrogate", {"body": "a\ud800"}),
    ("title of 201", {"title": "t" * 201}),
    ("body of 4001", {"body": "b" * 4001}),
    ("unknown field", {"colour": "red"}),
    ("id sent", {"id": "1-0"}),
    ("severity a list", {"severity": ["info"]}),
    ("kind a list", {"kind": ["data"]}),
    ("kind alert", {"kind": "alert"}),
    ("origin of 65", {"origin": "a" * 65}),
    ("correlation of 129", {"correlation_id": "c" * 129}),
    ("optional fields None", {"body": None, "user": None, "url": None, "data": None}),
    ("url unparseable", {"url": "http://[::1"}),
    ("url with a space", {"url": "https://x.example/a b"}),
    ("url with a surrogate", {"url": "https://x.example/\ud800"}),
    ("url //host", {"url": "//evil.example/"}),
    ("url /\\host", {"url": "/\\evil.example/"}),
    ("url javascript", {"url": "javascript:alert(1)"}),
    ("url HTTP upper", {"url": "HTTP://x.example/"}),
    ("url without host", {"url": "https:///a"}),
    ("data a list", {"data": [1]}),
    ("data empty", {"data": {}}),
    *[(f"data int {name}", {"data": {"n": value}}) for name, value in (
        ("2**63-1", 2**63 - 1), ("2**63", 2**63), ("2**64-1", 2**64 - 1), ("2**64", 2**64),
        ("-2**63", -(2**63)), ("-2**63-1", -(2**63) - 1), ("2**70", 2**70),
        ("-2**70", -(2**70)), ("10**400", 10**400))],
    ("data int 2**70 in a list", {"data": {"n": [[1, 2**70]]}}),
    *[(f"data float {value!r}", {"data": {"x": value}}) for value in (
        math.nan, math.inf, -math.inf, 1e308, 5e-324, -0.0, 1e-05, 1.5e-07)],
    ("data key int", {"data": {1: "a"}}),
    ("data key None", {"data": {None: "a"}}),
    ("data key True", {"data": {True: "a"}}),
    ("data key float", {"data": {1.5: "a"}}),
    ("data keys 1 and '1'", {"data": {1: "a", "1": "b"}}),
    ("data key int, nested", {"data": {"a": [{2: "b"}]}}),
    ("data key with a surrogate", {"data": {"\ud800": 1}}),
    ("data value with a surrogate", {"data": {"a": ["\ud800"]}}),
    ("data a set", {"data": {"s": {1}}}),
    ("data a tuple", {"data": {"t": (1, "a")}}),
    ("data a str of 16 KiB", {"data": {"s": "x" * (16384 - 8)}}),
    ("data a str past 16 KiB", {"data": {"s": "x" * (16384 - 7)}}),
    ("data 2-byte chars to 16 KiB", {"data": {"s": "é" * ((16384 - 8) // 2)}}),
    ("data 2-byte chars past 16 KiB", {"data": {"s": "é" * ((16384 - 8) // 2) + "x"}}),
    ("data escapes to 16 KiB", {"data": {"s": "\x01" * ((16384 - 8) // 6)}}),
    ("data escapes past 16 KiB", {"data": {"s": "\x01" * ((16384 - 8) // 6 + 1)}}),
    ("data 1e-05s at 16 KiB as Herald writes them", {"data": sized(1e-05, 500, 16384)}),
    ("data 1e-05s past 16 KiB as Herald writes them", {"data": sized(1e-05, 500, 16385)}),
    ("data 1.5e-07s at 16 KiB as Herald writes them", {"data": sized(1.5e-07, 500, 16384)}),
    ("data 1.5e-07s past 16 KiB as Herald writes them", {"data": sized(1.5e-07, 500, 16385)}),
    *[(f"data {levels} deep", {"data": nested(levels)}) for levels in (2, 249, 250, 256, 300)],
    ("data 250 deep in lists", {"data": nested(250, list)}),
    ("data 256 deep in lists", {"data": nested(256, list)}),
]
# Herald once checked MAX_DATA_DEPTH only when orjson failed to encode data: 251-254 deep
# was stored, and 255 passed validate() and crashed encode() (a TypeError: a 500).
PAST_DEPTH_ROWS = [*[(f"data {levels} deep", {"data": nested(levels)}) for levels in (251, 254, 255)],
                   ("data 255 deep in lists", {"data": nested(255, list)})]


@pytest.mark.parametrize("fields", [pytest.param(f, id=name) for name, f in ROWS])
def test_the_client_refuses_what_herald_refuses_and_only_that(fields):
    envelope = dict(BASE, **fields)
    herald, client = herald_takes(envelope), client_takes(envelope)
    assert (client is True) == (herald is True), f"client: {client}; Herald: {herald}"
    assert herald is True or not herald.startswith("crashed"), herald


@pytest.mark.parametrize("fields", [pytest.param(f, id=name) for name, f in PAST_DEPTH_ROWS])
def test_data_past_250_deep_is_refused_by_both(fields):
    envelope = dict(BASE, **fields)
    assert client_takes(envelope) is not True
    herald = herald_takes(envelope)
    assert herald is not True and not herald.startswith("crashed"), herald


def test_the_numbers_are_herald_s():
    assert client_rules.MAX_DATA_DEPTH == server_rules.MAX_DATA_DEPTH
    assert client_rules.MAX_DATA_BYTES == server_rules.MAX_DATA_BYTES
    assert client_rules.MAX_ENVELOPE_BYTES == server_rules.MAX_ENVELOPE_BYTES
    assert (client_rules.INT_MIN, client_rules.INT_MAX) == (strict_json._INT_MIN,
                                                            strict_json._INT_MAX)
    assert client_rules.MAX_USER_CHARS == server_rules.MAX_USER_CHARS
    assert client_rules.SEVERITIES == server_rules.SEVERITIES
    assert client_rules.TS_BYTES == len(b',"ts":""') + len(server_rules.now_iso())


def test_floats_are_counted_as_herald_s_encoder_writes_them():
    values = [1e-05, -1e-05, 1.2345e-05, 1e-06, 1e-07, -2.5e-10, 1e16, 1e22, 0.0001, 5e-324]
    rng = random.Random(35)
    for _ in range(20000):
        values.append(struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0])
        values.append(10 ** rng.uniform(-30, 30) * rng.choice((1, -1)))
    for value in values:
        if math.isfinite(value):
            assert client_rules.herald_float(repr(value)) == orjson.dumps(value).decode(), value


def test_a_refusal_names_the_place_at_fault():
    with pytest.raises(InvalidNotification, match=r"data\.a\.b\[1\] is an integer past 64 bits") \
            as refused:
        client_rules.check(dict(BASE, data={"a": {"b": [0, 2**70]}}))
    assert refused.value.field == "data"
    with pytest.raises(InvalidNotification, match="nested at most 250 deep"):
        client_rules.check(dict(BASE, data=nested(100_000)))  # no RecursionError
    with pytest.raises(InvalidNotification, match=r"data\.a has the key 1 \(int\): keys must be"):
        client_rules.check(dict(BASE, data={"a": {1: 2}}))
