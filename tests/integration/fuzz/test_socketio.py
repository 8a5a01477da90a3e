"""Socket.IO fuzzed: random payloads on every client event, random connect
``auth``, and malformed Engine.IO/Socket.IO frames on raw websockets (before
and after joining the namespace), all against one real web process. Every
event is answered (``ok`` true or an error), no bad auth connects, no frame
breaks the process or its relay, nothing is logged as a crash, and
afterwards a fresh client still gets what is published."""
import json

import pytest
import websocket
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.stream.envelope import TOPIC_RE
from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.integration.fuzz.conftest import TRIED
from tests.integration.fuzz.hostile import BODY_TEXT
from tests.support import Listener, LiveServer, wait_until

NS = "/notifications"
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=10), inner, max_size=6),
    max_leaves=20)
# Payloads shaped like the real ones, so that the checks past the first are reached too.
SHAPED = st.fixed_dictionaries({}, optional={
    "topics": st.lists(st.text(max_size=30) | JSON, max_size=8) | JSON,
    "ids": st.lists(st.from_regex(r"[0-9]{1,22}-[0-9]{1,22}", fullmatch=True) | JSON, max_size=8) | JSON,
    "upto": st.from_regex(r"[0-9]{1,22}-[0-9]{1,22}", fullmatch=True) | JSON,
    "last_id": JSON})
FUZZ = settings(max_examples=150, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def server(redis_server, tmp_path_factory):
    client = redis_server.client()
    client.flushall()
    accounts.create_user(client, "ann", "ann-password")
    # Payloads are under test here, not the message budget (tests/unit/realtime/test_budgets.py).
    running = LiveServer(redis_server.url, tmp_path_factory.mktemp("web"),
                         CLIENT_MESSAGE_RATE="100000", CLIENT_MESSAGE_BURST="100000")
    running.start()
    yield running
    running.stop()
    client.close()


@pytest.fixture(scope="module")
def token(server):
    return server.token("ann", "ann-password")


@pytest.fixture(scope="module")
def ann(server):
    listener = Listener(server, server.token("ann", "ann-password"))
    yield listener
    listener.close()


def still_whole(server, redis_server):
    """After a fuzz test, in it: the process lives and logged no crash, ann's
    subscriptions are valid prefixes, and a fresh client gets what is published."""
    log = server.log_path.read_text()
    assert "Traceback" not in log and '"level":"ERROR"' not in log, log[-3000:]
    client = redis_server.client()
    try:
        topics = subscriptions.list_topics(client, "ann")
        assert all(t == "*" or TOPIC_RE.match(t) for t in topics)
        subscriptions.add(client, "ann", ["fuzz"], limit=1000)
        fresh = Listener(server, server.token("ann", "ann-password"))
        try:
            published = Bus(client).publish("fuzz.after", "still here")
            wait_until(lambda: published in fresh.ids(), timeout=10, message="delivery after fuzzing")
        finally:
            fresh.close()
        assert server.process.poll() is None
    finally:
        client.close()


def test_every_event_payload_is_answered(ann, server, redis_server):
    @given(event=st.sampled_from(["subscribe", "unsubscribe", "read"]), payload=JSON | SHAPED)
    @settings(FUZZ, max_examples=300)
    def fuzz(event, payload):
        TRIED[f"Socket.IO event {event}"] += 1
        answer = ann.call(event, payload)
        assert isinstance(answer, dict) and isinstance(answer.get("ok"), bool), answer
        if not answer["ok"]:
            assert isinstance(answer["error"], str) and answer["error"]
    fuzz()
    still_whole(server, redis_server)


def raw_socket(server, token=None):
    """A websocket speaking Engine.IO by hand; with ``token``, connected to the namespace."""
    ws = websocket.WebSocket()
    ws.connect(server.url.replace("http", "ws") + "/socket.io/?EIO=4&transport=websocket",
               timeout=5)
    assert ws.recv().startswith("0{")
    if token:
        ws.send(f"40{NS}," + json.dumps({"token": token}))
        assert ws.recv().startswith(f"40{NS},")
        assert ws.recv().startswith(f'42{NS},["replayed",')  # where it went live
    return ws


def closed(ws):
    try:
        ws.close()
    except OSError:
        pass  # the server closed it first
    ws.shutdown()


def test_random_connect_auth_is_refused_cleanly(server, redis_server):
    @given(auth=JSON | SHAPED | st.fixed_dictionaries({"token": JSON | st.text(max_size=200)}))
    @FUZZ
    def fuzz(auth):
        TRIED["Socket.IO connect auth"] += 1
        ws = raw_socket(server)
        try:
            ws.send(f"40{NS}," + json.dumps(auth))
            try:
                reply = ws.recv()
            except websocket.WebSocketException:
                reply = ""
            # A CONNECT_ERROR with its reason, or (auth that is not even an object) the
            # connection closed; never a connection.
            if reply:
                assert reply.startswith(f"44{NS},"), reply
                assert "message" in json.loads(reply[len(f"44{NS},"):])
        finally:
            closed(ws)
    fuzz()
    still_whole(server, redis_server)


FRAME_TEXT = st.one_of(
    st.text(max_size=200),
    st.builds(lambda body: f"42{NS}," + body, st.text(max_size=200)),
    st.builds(lambda body: f"42{NS},1" + body, st.text(max_size=200)),
    st.builds(lambda event, body: f"42{NS}," + json.dumps([event, body])[:-1 if len(event) % 2 else None],
              st.sampled_from(["subscribe", "read", "unsubscribe", "nope", "connect", "disconnect",
                               "message", "notification", "reset"]), JSON),
    st.builds(lambda event, args: f"42{NS},7" + json.dumps([event, *args]),
              st.sampled_from(["subscribe", "read", "unsubscribe", "connect", "disconnect"]),
              st.lists(JSON, max_size=3)),
    # hostile.py's texts as an event's payload: too deep, lone surrogates, past 64 bits
    st.builds(lambda event, body: f"42{NS},9" + f'["{event}",{body}]',
              st.sampled_from(["subscribe", "read", "unsubscribe"]), BODY_TEXT),
    st.sampled_from(["", "4", "42", "3", "2", "6", "5", "1", "40", "41", f"41{NS},", "4x",
                     f"43{NS},1[]", f"45{NS},1-[]", "42[\"subscribe\"]"]),
)


def test_malformed_frames_never_hurt_the_server(server, token, redis_server):
    @given(frames=st.lists(FRAME_TEXT | st.binary(max_size=200), min_size=1, max_size=5),
           connected=st.booleans())
    @FUZZ
    def fuzz(frames, connected):
        TRIED["raw Engine.IO/Socket.IO frames"] += len(frames)
        ws = raw_socket(server, token if connected else None)
        try:
            for frame in frames:
                if isinstance(frame, bytes):
                    ws.send_binary(frame)
                else:
                    ws.send(frame)
        except (websocket.WebSocketException, OSError):
            pass  # the server may close a connection that speaks nonsense: that is its right
        finally:
            closed(ws)
    fuzz()
    still_whole(server, redis_server)


def test_frames_sent_back_to_back_are_all_read(server, token):
    """Several frames in one TCP segment: every one is read, none lost or misaligned."""
    ws = raw_socket(server, token)
    try:
        frames = b"".join(
            websocket.ABNF.create_frame(f'42{NS},{n}["subscribe",{{"topics":["t{n}"]}}]',
                                        websocket.ABNF.OPCODE_TEXT).format()
            for n in range(1, 6))
        ws.sock.sendall(frames)
        acks = [ws.recv() for _ in range(5)]
        # Each event is handled in a greenlet of its own, so the acks may come in any order.
        assert sorted(a.split("[", 1)[0] for a in acks) == [f"43{NS},{n}" for n in range(1, 6)]
    finally:
        closed(ws)


def test_a_frame_claiming_a_huge_length_is_refused_at_once(server, token):
    ws = raw_socket(server, token)
    try:
        # A masked text frame header that announces 2**62 bytes, and no payload.
        ws.sock.sendall(bytes([0x81, 0xFF]) + (2**62).to_bytes(8, "big") + b"\0\0\0\0")
        with pytest.raises((websocket.WebSocketException, OSError)):
            for _ in range(5):
                assert not ws.recv()
    finally:
        closed(ws)


def test_a_client_emitting_a_reserved_event_is_refused(server, token):
    for event in ("connect", "disconnect"):
        ws = raw_socket(server, token)
        try:
            ws.send(f"42{NS}," + json.dumps([event, {"token": token}]))
            # Cut off: a close frame, or a reset when the close raced our read.
            with pytest.raises((websocket.WebSocketException, ConnectionResetError)):
                for _ in range(5):  # nothing but the close may come back
                    assert not ws.recv()
        finally:
            closed(ws)
    assert "it sent a reserved event (disconnect)" in server.log_path.read_text()
