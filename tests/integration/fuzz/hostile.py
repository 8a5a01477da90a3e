"""Hostile envelopes as JSON *text*, for every ingress's fuzzer (issue 23).

The fuzzers once drew envelopes as Python values and let ``json.dumps`` write
them, so they never sent what a hand-written request can: a lone surrogate
escape, data nested 5,000 deep (``json.dumps`` itself cannot write that), an
integer past 64 bits, ``NaN``, or a URL such as ``http://[::1`` that makes
``urlsplit`` raise. Here each value is drawn as the text that goes on the
wire, so every one of those reaches the server.
"""
import json

from hypothesis import strategies as st

LONE_SURROGATES = ['"\\ud800"', '"a\\udfff"', '"\\udc00\\ud800"', '"x\\ud83d"', '"\\ud83d\\ude00 ok"']
URLISH = st.sampled_from([
    "http://[::1", "http://[::1]:99999/", "https://[not-ip]/", "http://a:b@[::1", "http://]",
    "http:///x", "//evil.example", "/\\evil", "javascript:alert(1)", "http://ok.example/x",
    "/relative/path", "http://[2002:7f00:1::]/", "https://host:-1/", "http://%zz/", "http://a b/",
]) | st.builds(lambda scheme, rest: scheme + rest,
                st.sampled_from(["http://", "https://", "http://[", "ftp://", "/", ""]),
                st.text(alphabet="[]:/@%?#.ab01 \\", max_size=20))


def weighted(*choices):
    """One of the strategies, each as often as its weight: ``weighted((3, a), (1, b))``.
    (``st.one_of(a, a, a, b)`` does not weigh: repeated branches count once.)"""
    bag = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(0, len(bag) - 1).flatmap(lambda index: bag[index])


def _deep(depth, opener='{"d":', closer="}"):
    return opener * depth + "1" + closer * depth


VALID_SCALAR = st.builds(json.dumps, st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
                         | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40))
NOT_JSON_SCALAR = st.one_of(  # what a hand-written request can send and json.dumps never writes
    st.sampled_from(LONE_SURROGATES),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400"]),
    st.integers(2**64, 2**90).map(str), st.integers(-(2**90), -(2**63) - 1).map(str),
)
# Mostly JSON (so the envelope's own checks are reached), an URL-like string often.
SCALAR_TEXT = weighted((6, VALID_SCALAR), (2, URLISH.map(json.dumps)), (1, NOT_JSON_SCALAR))
DEEP_TEXT = st.one_of(st.integers(1, 300).map(_deep), st.integers(900, 6000).map(_deep),
                      st.integers(900, 6000).map(lambda n: _deep(n, "[", "]")))
VALUE_TEXT = st.recursive(
    weighted((4, SCALAR_TEXT), (1, DEEP_TEXT)),
    lambda inner: st.lists(inner, max_size=4).map(lambda items: "[" + ",".join(items) + "]")
    | st.lists(st.tuples(st.sampled_from(['"k"', '"\\ud800"', '"n"', '"é"']) | SCALAR_TEXT.filter(
        lambda t: t.startswith('"')), inner), max_size=4).map(
        lambda pairs: "{" + ",".join(f"{k}:{v}" for k, v in pairs) + "}"),
    max_leaves=8)
FIELD_TEXT = {
    "topic": st.sampled_from(['"ok"', '"a.b"', '"Bad"', '""', '"z.\\ud800"']) | SCALAR_TEXT,
    "title": SCALAR_TEXT,
    "body": SCALAR_TEXT,
    "severity": st.sampled_from(['"info"', '"critical"', '"loud"', "[]", "{}"]) | SCALAR_TEXT,
    "data": st.one_of(st.just("{}"), VALUE_TEXT.map(lambda v: '{"v":' + v + "}"), VALUE_TEXT),
    "user": st.sampled_from(['"ann"', '"a\\ud800"', '"x y"']) | SCALAR_TEXT,
    "origin": st.sampled_from(['"ab12"', '"zz"']) | SCALAR_TEXT,
    "correlation_id": SCALAR_TEXT,
    "url": weighted((3, URLISH.map(json.dumps)), (1, SCALAR_TEXT)),
    "id": st.just('"1-0"'),
    "extra": SCALAR_TEXT,
}


@st.composite
def envelope_text(draw, topic=True):
    """One envelope as JSON text: mostly a topic and a title, then any hostile fields."""
    fields = {}
    good_topic = st.sampled_from(['"fuzz.ok"', '"fuzz.a"', '"fuzz.b.c"'])
    if topic:  # mostly good topics and titles, so that the other fields' checks are reached
        fields["topic"] = draw(weighted((4, good_topic), (1, FIELD_TEXT["topic"])))
    good_title = st.builds(json.dumps, st.text(min_size=1, max_size=30))
    fields["title"] = draw(weighted((3, good_title), (1, FIELD_TEXT["title"])))
    names = st.sampled_from(["url", "url", "data", "data"] + sorted(FIELD_TEXT))
    for name in draw(st.lists(names, max_size=3, unique=True)):
        fields[name] = draw(FIELD_TEXT[name])
    return "{" + ",".join(f'"{name}":{text}' for name, text in fields.items()) + "}"


ENVELOPE_TEXT = envelope_text()
# Noise besides: not JSON, or JSON that is not an object.
BODY_TEXT = ENVELOPE_TEXT | VALUE_TEXT | st.text(max_size=60)
