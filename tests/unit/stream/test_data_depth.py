"""``data`` nests at most 250 deep (docs/contract.md), on every ingress, by name.

Herald once checked MAX_DATA_DEPTH only when orjson failed to encode ``data``: 251-254
deep was stored, against the rule, and 255 deep passed validate() and crashed encode()
(orjson's TypeError once the envelope's own level was added): a 500 over REST. Depth is
counted as field_rules.depth counts it: ``{"a": 1}`` is 2 deep.
"""
import json

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.stream import envelope as rules
from app.stream.envelope import MAX_DATA_DEPTH, EnvelopeError, encode, validate
from app.stream.keys import STREAM
from app.stream.publish import Bus, prepare
from tests.unit.web.api.helpers import bearer
from workers.bridge import frames

TS = "2026-01-01T00:00:00.000Z"
RULE = f"data: must be nested at most {MAX_DATA_DEPTH} deep"
PAST = (251, 252, 254, 255, 256, 300, 100_000)


def nested(levels, kind=dict):
    """``data`` ``levels`` deep: ``levels - 1`` containers, a number innermost."""
    value = 1
    for _ in range(levels - 2):
        value = {"a": value} if kind is dict else [value]
    return {"a": value}


def envelope(levels, kind=dict):
    return {"topic": "z.b", "title": "x", "data": nested(levels, kind)}


@pytest.mark.parametrize("kind", [dict, list])
def test_250_deep_is_stored_whole(kind):
    raw = encode(validate(envelope(MAX_DATA_DEPTH, kind)), TS)
    assert orjson.loads(raw)["data"] == nested(MAX_DATA_DEPTH, kind)


@pytest.mark.parametrize("kind", [dict, list])
@pytest.mark.parametrize("levels", PAST)
def test_past_250_deep_is_refused_by_name_at_validate(levels, kind):
    with pytest.raises(EnvelopeError) as caught:
        validate(envelope(levels, kind))
    assert str(caught.value) == RULE and caught.value.field == "data"


def test_the_bus_refuses_it_and_stores_nothing(redis):
    """Bus.publish: the Python API, the Spark notifier's RedisPublisher, workers."""
    bus = Bus(redis)
    for levels in (251, 255):
        with pytest.raises(EnvelopeError, match=RULE):
            bus.publish("z.b", "x", data=nested(levels))
        with pytest.raises(EnvelopeError, match=f"notifications\\[1\\].{RULE}"):
            bus.publish_envelopes([envelope(2), envelope(levels)])
        with pytest.raises(EnvelopeError, match=RULE):
            prepare(envelope(levels))
    assert redis.xlen(STREAM) == 0
    bus.publish("z.b", "x", data=nested(MAX_DATA_DEPTH))
    assert redis.xlen(STREAM) == 1


@pytest.mark.parametrize("levels", [251, 254, 255])
def test_rest_answers_400_naming_data(client, redis, admin, levels):
    body = json.dumps(envelope(levels))
    reply = client.post("/api/notifications", data=body, content_type="application/json",
                        headers=bearer(admin[0]))
    assert reply.status_code == 400, reply.get_data(as_text=True)[:300]
    assert reply.get_json() == {"error": RULE, "field": "data"}
    reply = client.post("/api/notifications/batch", content_type="application/json",
                        data='{"notifications": [' + body + "]}", headers=bearer(admin[0]))
    assert reply.status_code == 400, reply.get_data(as_text=True)[:300]
    assert reply.get_json()["field"] == "notifications[0].data"
    assert redis.xlen(STREAM) == 0


@pytest.mark.parametrize("levels", [251, 255])
def test_the_zeromq_bridge_refuses_it_as_an_invalid_envelope(levels):
    payload = json.dumps(envelope(levels)).encode()
    for read, message in ((frames.from_pull, [b"z.b", payload]), (frames.from_router, [payload])):
        with pytest.raises(frames.BadFrame) as caught:
            frames.checked(read, message)
        assert caught.value.kind == "invalid_envelope" and str(caught.value) == RULE


@pytest.mark.parametrize("levels", [251, 255])
def test_the_cli_refuses_it_by_name(runner, redis, levels):
    result = runner.invoke(args=["notify", "z.b", "x", "--data", json.dumps(nested(levels))])
    assert result.exit_code == 1 and RULE in result.output, result.output
    line = json.dumps(envelope(levels)).encode()
    result = runner.invoke(args=["notify", "--stdin"], input=line)
    assert result.exit_code == 1 and f"line 1: {RULE}" in result.output, result.output
    assert redis.xlen(STREAM) == 0


def test_a_shared_value_does_not_make_the_walk_explode():
    """A Python caller may share one object at every level: 300 levels of two references
    each is 2**300 paths to the innermost, refused without walking them all."""
    value = 1
    for _ in range(300):
        value = [value, value]
    with pytest.raises(EnvelopeError) as caught:
        validate({"topic": "z.b", "title": "x", "data": {"a": value}})
    assert caught.value.field == "data"


# Whatever a Python caller passes, validate() then encode() either stores it or raises
# EnvelopeError naming a field: never the TypeError/ValueError that was a 500.
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(), st.text(max_size=5), st.binary(max_size=3),
                    st.sampled_from([object(), 1j, (1, 2), {1}, frozenset()]))
KEYS = st.one_of(st.text(max_size=3), st.integers(), st.none(), st.booleans(),
                 st.sampled_from(["\ud800", (1,)]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)), max_leaves=20)


def deep_value(draw_levels, leaf):
    value = leaf
    for index in range(draw_levels):
        value = [value] if index % 2 else {"k": value}
    return value


@settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(fields=st.one_of(st.just({}), st.dictionaries(
           st.sampled_from(rules.KNOWN + rules.SET_BY_HERALD + ("x",)), VALUES, max_size=5)),
       levels=st.one_of(st.integers(0, 5), st.integers(245, 256)), leaf=VALUES, topic=st.booleans())
def test_validate_and_encode_are_total(fields, levels, leaf, topic):
    candidate = dict(fields)
    if topic:
        candidate.update(topic="z.b", title="x")
    if levels:
        candidate["data"] = {"d": deep_value(levels, leaf)}
    try:
        encode(validate(candidate), TS)
    except EnvelopeError as exc:
        assert exc.field and str(exc).startswith(str(exc.field) + ": ")


def test_tuples_count_as_the_lists_orjson_writes():
    value = 1
    for _ in range(MAX_DATA_DEPTH):
        value = (value,)
    with pytest.raises(EnvelopeError, match=RULE):
        validate({"topic": "z.b", "title": "x", "data": {"a": value}})
