"""The ZeroMQ bridge's ingest fuzzed: random multipart messages on PULL and on
ROUTER, from frames that are nearly right (a topic and an envelope with one
thing wrong, or hostile.py's texts: an unclosed IPv6 url, a lone surrogate,
data nested 5,000 deep, an integer past 64 bits) to plain noise. Each
confirmed request is answered, exactly the answers that say ``ok`` are in the
stream, every entry there is a whole, valid notification, and the bridge lives
on and still takes good input."""
import json

import orjson
import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.stream import envelope as rules
from app.stream.keys import STREAM
from herald_client.zmq import Publisher
from tests.integration.fuzz.conftest import TRIED
from tests.integration.fuzz.hostile import ENVELOPE_TEXT, envelope_text
from tests.integration.fuzz.test_socketio import JSON
from tests.support import Bridge, wait_until

FUZZ = settings(max_examples=300, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
FIELDS = st.sampled_from(["topic", "title", "body", "severity", "data", "user", "origin",
                          "correlation_id", "id", "ts", "extra"])
ENVELOPE = st.dictionaries(FIELDS, JSON | st.text(max_size=30), max_size=6) | st.fixed_dictionaries(
    {"topic": st.sampled_from(["ok", "a.b", "Bad", "", "x" * 201]),
     "title": st.text(max_size=30)},
    optional={"severity": st.sampled_from(["info", "critical", "loud"]), "data": JSON})
FRAME = st.one_of(
    st.binary(max_size=100),
    ENVELOPE.map(lambda e: json.dumps(e).encode()),
    st.sampled_from([b"", b"ok", b"a.b", b"\xff\xfe", b"{", b"[]", b"null", b"x" * 70_000]),
)
def _wire(text):
    return text.encode("utf-8", "surrogatepass")


# The hostile texts every ingress is fuzzed with (hostile.py): a confirmed request's one
# frame, and a push's [topic, envelope without its topic].
MESSAGE = st.lists(FRAME, min_size=1, max_size=4) | ENVELOPE_TEXT.map(lambda t: [_wire(t)]) \
    | st.tuples(st.sampled_from([b"fuzz.ok", b"fuzz.a", b"Bad", b"\xff"]),
                envelope_text(topic=False).map(_wire)).map(list)


@pytest.fixture
def bridge(redis_server, redis, tmp_path):
    running = Bridge(redis_server.url, tmp_path)
    running.start()
    context = zmq.Context.instance()
    push, dealer = context.socket(zmq.PUSH), context.socket(zmq.DEALER)
    push.connect(running.pull)
    dealer.connect(running.router)
    yield running, push, dealer, redis
    push.close(0)
    dealer.close(0)
    running.stop()


def test_confirmed_requests_are_all_answered(bridge):
    _running, _push, dealer, _client = bridge
    sent, confirmed = [], []

    @given(message=MESSAGE)
    @FUZZ
    def fuzz(message):
        TRIED["ZeroMQ ROUTER messages"] += 1
        sent.append(message)
        dealer.send_multipart(message)
        assert dealer.poll(5000), f"no answer to {message!r:.200}"
        answer = json.loads(dealer.recv_multipart()[-1])
        assert isinstance(answer["ok"], bool)
        if answer["ok"]:
            confirmed.append(answer["id"])
        else:
            assert answer["error"]
    fuzz()
    whole_and_accounted_for(bridge, len(sent), confirmed)


def test_pushed_noise_is_dropped_or_stored_whole(bridge):
    sent = []

    @given(message=MESSAGE)
    @FUZZ
    def fuzz(message):
        TRIED["ZeroMQ PULL messages"] += 1
        sent.append(message)
        bridge[1].send_multipart(message)
    fuzz()
    whole_and_accounted_for(bridge, len(sent), [])


def whole_and_accounted_for(bridge, sent, confirmed):
    """In the test that fuzzed: a good message after the noise is stored (the bridge
    lives), the stream holds only whole notifications, every confirmed id among
    them, and every message the bridge read is stored or refused with a reason."""
    running, _push, _dealer, client = bridge
    with Publisher(running.router, confirmed=True) as publisher:
        last = publisher.publish("fuzz.after", "still here")
    wait_until(lambda: client.xrevrange(STREAM, count=1)[0][0].decode() == last, timeout=15,
               message="the good message after the fuzzing")
    entries = client.xrange(STREAM)
    assert set(confirmed) <= {entry_id.decode() for entry_id, _ in entries}
    for _entry_id, fields in entries:
        envelope = orjson.loads(fields[b"envelope"])
        clean = {k: v for k, v in envelope.items() if k != "ts"}
        assert rules.validate(clean) == clean
    assert running.process.poll() is None
    running.stop()
    counters = running.counters()
    refused = sum(n for name, n in counters.items() if name.startswith("bad_"))
    assert counters["stored"] + refused == sent + 1
    assert counters["stored"] == len(entries)
