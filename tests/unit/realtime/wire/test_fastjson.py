"""The packets' JSON module: orjson's speed, the standard library's range."""
import pytest

from app.realtime.wire import fastjson


def test_round_trip_and_compact():
    assert fastjson.dumps({"a": [1, "é", None]}) == '{"a":[1,"é",null]}'
    assert fastjson.loads('{"a":[1,"é",null]}') == {"a": [1, "é", None]}


def test_integers_past_64_bits_are_written_and_read():
    big = -(2**63) - 1
    assert fastjson.dumps(["x", big]) == f'["x",{big}]'
    # orjson reads them as floats: a client's odd number is taken, not a crash.
    assert fastjson.loads(f'["x",{big}]') == ["x", pytest.approx(big)]


def test_invalid_json_is_a_value_error():
    with pytest.raises(ValueError):
        fastjson.loads("[1,")
