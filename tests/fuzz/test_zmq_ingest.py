"""The ZeroMQ bridge's ingest fuzzed: random multipart messages on PULL and on
ROUTER, from frames that are nearly right (a topic and an envelope with one
thing wrong) to plain noise. Each confirmed request is answered, exactly the
answers that say ``ok`` are in the stream, every entry there is a whole,
valid notification, and the bridge lives on and still takes good input."""
import json

import orjson
import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import notifications
from app.bus import STREAM
from tests.fuzz.conftest import TRIED
from tests.fuzz.test_socketio import JSON
from tests.support import Bridge, wait_until
from workers.zmq_peers import Publisher

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
MESSAGE = st.lists(FRAME, min_size=1, max_size=4)
CONFIRMED_OK = []  # ids the bridge confirmed


@pytest.fixture(scope="module")
def bridge(redis_server, tmp_path_factory):
    client = redis_server.client()
    client.flushall()
    running = Bridge(redis_server.url, tmp_path_factory.mktemp("bridge"))
    running.start()
    context = zmq.Context.instance()
    push, dealer = context.socket(zmq.PUSH), context.socket(zmq.DEALER)
    push.connect(running.pull)
    dealer.connect(running.router)
    yield running, push, dealer, client
    push.close(0)
    dealer.close(0)
    running.stop()
    client.close()


@given(message=MESSAGE)
@FUZZ
def test_confirmed_requests_are_all_answered(bridge, message):
    _bridge, _push, dealer, _client = bridge
    TRIED["ZeroMQ ROUTER messages"] += 1
    dealer.send_multipart(message)
    assert dealer.poll(5000), f"no answer to {message!r:.200}"
    answer = json.loads(dealer.recv_multipart()[-1])
    assert isinstance(answer["ok"], bool)
    if answer["ok"]:
        CONFIRMED_OK.append(answer["id"])
    else:
        assert answer["error"]


@given(message=MESSAGE)
@FUZZ
def test_pushed_noise_is_dropped_or_stored_whole(bridge, message):
    TRIED["ZeroMQ PULL messages"] += 1
    bridge[1].send_multipart(message)


def test_the_stream_holds_only_whole_notifications_and_the_bridge_lives(bridge):
    running, _push, _dealer, client = bridge
    with Publisher(running.router, confirmed=True) as publisher:
        last = publisher.publish("fuzz.after", "still here")
    wait_until(lambda: client.xrevrange(STREAM, count=1)[0][0].decode() == last, timeout=15,
               message="the good message after the fuzzing")
    entries = client.xrange(STREAM)
    ids = [entry_id.decode() for entry_id, _ in entries]
    assert set(CONFIRMED_OK) <= set(ids)
    for _entry_id, fields in entries:
        envelope = orjson.loads(fields[b"envelope"])
        clean = {k: v for k, v in envelope.items() if k != "ts"}
        assert notifications.validate(clean) == clean
    assert running.process.poll() is None
    running.stop()
    counters = running.counters()
    refused = sum(n for name, n in counters.items() if name.startswith("bad_"))
    # Every message the bridge read is accounted for: stored, or refused with a reason.
    assert counters["stored"] + refused == TRIED["ZeroMQ PULL messages"] + TRIED["ZeroMQ ROUTER messages"] + 1
    assert counters["stored"] == len(entries)
