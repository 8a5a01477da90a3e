"""The envelope field ``kind`` (app.stream.envelope) and the feed filter's decision on it
(app.stream.filters), made on the stored JSON's raw bytes."""
import orjson
import pytest

from app.stream import history
from app.stream.envelope import DATA_PREFIX, EnvelopeError, encode, validate, with_id
from app.stream.filters import Filter
from app.stream.keys import STREAM
from app.stream.publish import Bus, fingerprint


def ok(**fields):
    return dict({"topic": "board.card.updated", "title": "Card 7"}, **fields)


def stored(envelope):
    """The JSON the stream would hold for ``envelope`` (validated, stamped)."""
    return encode(validate(envelope), "2026-01-01T00:00:00.000Z")


# -- validation -----------------------------------------------------------------------

def test_a_data_event_keeps_kind_as_its_first_key():
    clean = validate(ok(severity="warning", data={"id": 7}, kind="data"))
    assert list(clean)[0] == "kind" and clean["kind"] == "data"
    assert stored(ok(data={"id": 7}, kind="data")).startswith(b'{"kind":"data",')


@pytest.mark.parametrize("envelope", [ok(), ok(kind="alert")])
def test_an_alert_carries_no_kind_given_or_not(envelope):
    """An explicit "alert" is dropped: the same bytes, and the same idempotency
    fingerprint, as an alert sent without kind."""
    clean = validate(envelope)
    assert "kind" not in clean
    assert stored(envelope) == stored(ok())
    assert b"kind" not in stored(envelope)
    assert fingerprint(clean) == fingerprint(validate(ok()))


@pytest.mark.parametrize("kind", ["Alert", "DATA", "", "event", None, 1, True, ["data"],
                                  {"data": 1}, "data "])
def test_any_other_kind_is_refused_naming_the_field(kind):
    with pytest.raises(EnvelopeError) as caught:
        validate(ok(kind=kind))
    assert caught.value.field == "kind"
    assert str(caught.value) == "kind: must be alert or data"


def test_the_batch_path_names_the_envelope_and_kind(redis):
    with pytest.raises(EnvelopeError) as caught:
        Bus(redis).publish_envelopes([ok(), ok(kind="notice")])
    assert caught.value.field == "notifications[1].kind"
    assert redis.exists(STREAM) == 0  # nothing is half-written


# -- the raw-bytes decision -----------------------------------------------------------

def _keep(wanted, envelope, entry_id=b"1-0"):
    return wanted.keep(entry_id, envelope["topic"].encode(), stored(envelope))


NESTED = [
    ok(data={"kind": "data"}),                       # data's own "kind" key
    ok(title='{"kind":"data"', body='{"kind":"data"}'),  # the marker as text
    ok(data={"kind": "data", "nested": {"kind": "data"}}, kind="alert"),
]


@pytest.mark.parametrize("envelope", NESTED)
def test_an_alert_holding_kind_data_inside_is_still_an_alert(envelope):
    raw = stored(envelope)
    assert b'"kind":"data"' in raw or b'\\"kind\\":\\"data\\"' in raw
    assert not raw.startswith(DATA_PREFIX)
    assert _keep(Filter(kind="alert"), envelope) is not None
    assert _keep(Filter(kind="data"), envelope) is None


def test_a_data_event_holding_kind_data_inside_is_one_data_event():
    envelope = ok(kind="data", data={"kind": "data"})
    assert _keep(Filter(kind="alert"), envelope) is None
    kept = _keep(Filter(kind="data"), envelope)
    assert kept == dict(validate(envelope), id="1-0", ts="2026-01-01T00:00:00.000Z")


@pytest.mark.parametrize("kind, alert, data", [("alert", True, False), ("data", False, True),
                                               ("all", True, True)])
def test_each_kind_keeps_what_it_names(kind, alert, data):
    wanted = Filter(kind=kind)
    assert (_keep(wanted, ok()) is not None) is alert
    assert (_keep(wanted, ok(kind="data")) is not None) is data


def test_a_filter_keeps_both_unless_told_and_refuses_other_kinds():
    assert history.EVERYTHING.kind == "all"
    with pytest.raises(ValueError):
        Filter(kind="alerts")


def test_the_decision_holds_on_what_the_bus_stored(redis):
    """Published for real: the stream's envelope field starts with the marker for a
    data event only, and the id spliced in front leaves ``kind`` right after it."""
    bus = Bus(redis)
    alert = bus.publish("board.card", "moved", data={"kind": "data"})
    data = bus.publish("board.card", "moved", kind="data", data={"kind": "data"})
    by_id = {i.decode(): f[b"envelope"] for i, f in redis.xrange(STREAM)}
    assert not by_id[alert].startswith(DATA_PREFIX)
    assert by_id[data].startswith(DATA_PREFIX)
    assert with_id(by_id[data], data).startswith(b'{"id":"' + data.encode() + b'","kind":"data"')
    assert orjson.loads(with_id(by_id[alert], alert)).get("kind") is None


def test_the_replay_from_redis_keeps_data_events_as_stored(redis):
    """A reconnect's replay read from the stream (history.replay, both forms) filters
    by visibility only: data events come back in order, unchanged."""
    bus = Bus(redis)
    published = [bus.publish("board.card", "one", kind="data", data={"kind": "data"}),
                 bus.publish("board.card", "two"),
                 bus.publish("board.card", "three", kind="data", user="ann")]
    [(decoded, cursor)] = list(history.replay(redis, "ann", ["board"], "0-0"))
    assert [n["id"] for n in decoded] == published and cursor == published[-1]
    assert [n.get("kind") for n in decoded] == ["data", None, "data"]
    [(raw, _)] = list(history.replay(redis, "ann", ["board"], "0-0", raw=True))
    assert raw[0][1].startswith('{"id":"' + published[0] + '","kind":"data",')
