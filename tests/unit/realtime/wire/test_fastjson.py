"""The packets' JSON module: orjson's speed, the standard library's range."""
import pytest

from app.realtime.wire import fastjson


def test_round_trip_and_compact():
    assert fastjson.dumps({"a": [1, "é", None]}) == '{"a":[1,"é",null]}'
    assert fastjson.loads('{"a":[1,"é",null]}') == {"a": [1, "é", None]}


def test_integers_past_64_bits_are_written_and_the_widest_are_read_exactly():
    big = -(2**63) - 1
    assert fastjson.dumps(["x", big]) == f'["x",{big}]'
    for edge in (-(2**63), 2**64 - 1, 10**18 + 1, big, 2**90):
        assert fastjson.loads(f'["x",{edge}]') == ["x", edge]  # exactly, not as orjson's float


def test_invalid_json_is_a_value_error():
    with pytest.raises(ValueError):
        fastjson.loads("[1,")


@pytest.mark.parametrize("text", ["[" * 5000 + "]" * 5000, '["\\ud800"]', "[NaN]"])
def test_what_cannot_be_kept_as_sent_is_a_value_error(text):
    """A packet nested 5,000 deep raised RecursionError from the standard library (issue 23)."""
    with pytest.raises(ValueError):
        fastjson.loads(text)
