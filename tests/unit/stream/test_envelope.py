"""The envelope rules and topic matching (app.stream.envelope)."""
import orjson
import pytest

from app.stream.envelope import (
    EnvelopeError,
    check_stream_id,
    check_topic_prefix,
    encode,
    topic_matches,
    topic_prefixes,
    validate,
    visible_to,
    with_id,
)


def ok(**fields):
    return dict({"topic": "spark.job.succeeded", "title": "Rollup done"}, **fields)


def rejects(envelope, field, words):
    with pytest.raises(EnvelopeError) as caught:
        validate(envelope)
    assert caught.value.field == field
    assert words in str(caught.value)
    assert str(caught.value).startswith(f"{field}: ")


def test_minimal_envelope_gets_default_severity():
    assert validate(ok()) == {"topic": "spark.job.succeeded", "title": "Rollup done",
                              "severity": "info"}


def test_full_envelope_is_kept():
    full = ok(body="line 1\nline 2\ttab", severity="critical", data={"rows": 3},
              user="alice", origin="ab12", correlation_id="run-42")
    assert validate(full) == full


@pytest.mark.parametrize("topic", ["a", "spark", "spark.job.succeeded", "a_b-c.0.x", "x" * 200])
def test_good_topics(topic):
    assert validate(ok(topic=topic))["topic"] == topic


@pytest.mark.parametrize("topic", ["", "Spark", "spark.", ".spark", "spark..job", "spark job",
                                   "spark/job", "*", "x" * 201, "ü"])
def test_bad_topics(topic):
    rejects(ok(topic=topic), "topic", "must be")


def test_topic_required_and_string():
    rejects({"title": "t"}, "topic", "is required")
    rejects(ok(topic=5), "topic", "must be a string")


def test_title_rules():
    rejects({"topic": "a"}, "title", "is required")
    rejects(ok(title=""), "title", "1-200 characters")
    rejects(ok(title="x" * 201), "title", "1-200 characters")
    rejects(ok(title=["x"]), "title", "must be a string")
    rejects(ok(title="a\nb"), "title", "control characters")
    assert validate(ok(title="x" * 200))["title"] == "x" * 200


def test_body_rules():
    assert validate(ok(body="x" * 4000))["body"] == "x" * 4000
    rejects(ok(body="x" * 4001), "body", "1-4000 characters")
    rejects(ok(body="bell\x07"), "body", "control characters")
    rejects(ok(body=3), "body", "must be a string")


def test_html_is_kept_as_plain_text():
    assert validate(ok(title="<script>alert(1)</script>"))["title"] == "<script>alert(1)</script>"


@pytest.mark.parametrize("severity", ["info", "success", "warning", "error", "critical"])
def test_severities(severity):
    assert validate(ok(severity=severity))["severity"] == severity


def test_bad_severity_lists_the_choices():
    rejects(ok(severity="fatal"), "severity", "info, success, warning, error, critical")


def test_data_rules():
    rejects(ok(data=[1, 2]), "data", "must be a JSON object")
    rejects(ok(data="x"), "data", "must be a JSON object")
    big = {"blob": "x" * (16 * 1024)}
    rejects(ok(data=big), "data", "at most 16384 bytes")
    fits = {"blob": "x" * (16 * 1024 - len('{"blob":""}'))}
    assert validate(ok(data=fits))["data"] == fits


# Ids a host app may give its users (docs/contract.md, "Account identity"): any string.
USER_IDS = ["42", "user:42", "alice@example.com", "Zo\u00eb M\u00fcller", "x" * 255,
            "550e8400-e29b-41d4-a716-446655440000", "no spaces? yes spaces", "a\nb", "\x00",
            "\u2028", " ", "\U0001f600"]


@pytest.mark.parametrize("user", USER_IDS)
def test_user_is_any_string_of_1_to_255_characters(user):
    assert validate(ok(user=user))["user"] == user


@pytest.mark.parametrize("user, words", [
    ("", "1-255 characters"),
    ("x" * 256, "1-255 characters"),
    ("\ud800", "valid Unicode"),
    ("ok\udfffok", "valid Unicode"),
    (42, "must be a string"),
    (["a"], "must be a string"),
    (True, "must be a string"),
])
def test_user_refusals_name_the_field(user, words):
    rejects(ok(user=user), "user", words)


def test_user_origin_correlation_rules():
    rejects(ok(origin="xyz"), "origin", "hex string")
    rejects(ok(origin="a" * 65), "origin", "hex string")
    rejects(ok(correlation_id="x" * 129), "correlation_id", "1-128 characters")


def test_unknown_and_herald_fields_are_refused():
    rejects(ok(colour="red"), "colour", "is not a known field")
    rejects(ok(id="1-0"), "id", "is set by Herald")
    rejects(ok(ts="2026-01-01T00:00:00.000Z"), "ts", "is set by Herald")


def test_not_an_object():
    with pytest.raises(EnvelopeError) as caught:
        validate(["topic"])
    assert caught.value.field == "envelope"


def test_encode_stamps_ts_and_splices_id():
    raw = encode(validate(ok()), "2026-11-21T10:00:00.123Z")
    envelope = orjson.loads(with_id(raw, b"17-3"))
    assert envelope["id"] == "17-3"
    assert envelope["ts"] == "2026-11-21T10:00:00.123Z"
    assert envelope["topic"] == "spark.job.succeeded"


def test_whole_envelope_limit():
    # Every field at its maximum still fits in 64 KiB ...
    envelope = validate(ok(title="€" * 200, body="€" * 4000,
                           data={"k": "x" * (16 * 1024 - 10)}))
    assert len(encode(envelope, "t")) < 64 * 1024


@pytest.mark.parametrize("prefix,topic,expected", [
    ("spark", "spark", True),
    ("spark", "spark.job.succeeded", True),
    ("spark", "sparkle", False),
    ("spark.job", "spark.jobs", False),
    ("spark.job", "spark", False),
    ("*", "anything.at.all", True),
])
def test_topic_matches(prefix, topic, expected):
    assert topic_matches(prefix, topic) is expected


def test_topic_prefixes_are_exactly_the_matching_subscriptions():
    assert topic_prefixes("spark.job.done") == ["*", "spark", "spark.job", "spark.job.done"]
    for prefix in topic_prefixes("spark.job.done"):
        assert topic_matches(prefix, "spark.job.done")


def test_visibility():
    assert visible_to("ann", ["spark"], "spark.job", None)
    assert not visible_to("ann", ["spark"], "sparkle", None)
    assert visible_to("ann", [], "anything", "ann")
    assert not visible_to("ann", ["*"], "anything", "bob")


def test_subscription_prefix_check():
    check_topic_prefix("*")
    check_topic_prefix("spark.job")
    for bad in ["", "Spark", "a..b", 7, "**"]:
        with pytest.raises(EnvelopeError):
            check_topic_prefix(bad)


def test_stream_id_check():
    assert check_stream_id("1700000000000-0") == "1700000000000-0"
    for bad in ["", "17", "a-b", "1-2-3", None, 5]:
        with pytest.raises(EnvelopeError):
            check_stream_id(bad)


def test_a_cursor_is_an_id_or_zero_for_the_start():
    from app.stream.envelope import check_cursor
    assert check_cursor("0") == check_cursor("0-0") == "0-0"
    assert check_cursor("1700000000000-3") == "1700000000000-3"
    for bad in ("", "00", "-1", "0-", "x", 0, None, "1-2-3"):
        with pytest.raises(EnvelopeError, match="or 0 for the start of history"):
            check_cursor(bad, "after")


@pytest.mark.parametrize("subscriptions, allowed, expected", [
    (["*"], None, ["*"]),
    (["*", "billing"], ["board.42"], ["board.42"]),
    (["board", "billing"], ["board.42", "ops"], ["board.42"]),
    (["board.42.cards", "ops.deploy"], ["board", "ops"], ["board.42.cards", "ops.deploy"]),
    (["boardroom"], ["board"], []),
    (["board"], ["*"], ["board"]),
    (["*"], ["*"], ["*"]),
    ([], ["board"], []),
])
def test_restrict_keeps_what_subscriptions_cover_inside_the_limits(subscriptions, allowed, expected):
    from app.stream.envelope import restrict
    assert restrict(subscriptions, allowed) == expected


# Every input either passes or raises EnvelopeError naming a field: validate() and encode()
# are total, since each ingress (REST, CLI, the bridge, Socket.IO) turns only EnvelopeError
# into a refusal. These once escaped as ValueError/TypeError (issue 23).
@pytest.mark.parametrize("envelope,field", [
    ({"topic": "z.b", "title": "x", "url": "http://[::1"}, "url"),
    ({"topic": "z.b", "title": "x", "url": "http://[not-an-ip]/"}, "url"),
    ({"topic": "z.b", "title": "x", "url": "https://a/\ud800"}, "url"),
    ({"topic": "z.b", "title": "\ud800"}, "title"),
    ({"topic": "z.b", "title": "x", "body": "a\udfffb"}, "body"),
    ({"topic": "z.b", "title": "x", "correlation_id": "\udc00"}, "correlation_id"),
    ({"topic": "z.b", "title": "x", "data": {"k": "\ud800"}}, "data"),
    ({"topic": "z.b", "title": "x", "data": {"\ud800": 1}}, "data"),
    ({"topic": "z.b", "title": "x", "data": {"n": 2**70}}, "data"),
    ({"topic": "z.b", "title": "x", "data": {1: 2}}, "data"),
])
def test_what_once_escaped_validation_is_an_envelope_error(envelope, field):
    with pytest.raises(EnvelopeError) as caught:
        encode(validate(envelope), "2026-01-01T00:00:00Z")
    assert caught.value.field == field


def test_data_nested_too_deep_is_refused_by_name():
    deep = {}
    for _ in range(5000):
        deep = {"d": deep}
    with pytest.raises(EnvelopeError) as caught:
        validate({"topic": "z.b", "title": "x", "data": deep})
    assert caught.value.field == "data" and "deep" in caught.value.rule
