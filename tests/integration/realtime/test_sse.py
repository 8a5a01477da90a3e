"""Server-Sent Events (GET /api/stream) with a plain HTTP client, against a real server."""
import http.client
import socket
import time

import pytest
import requests

from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.support import EventStream, LiveServer, RedisServer, issue_token, wait_for


@pytest.fixture
def server(redis_server, redis, tmp_path):
    live = LiveServer(redis_server.url, tmp_path, SSE_HEARTBEAT="1", STREAM_TOKEN_TTL="2",
                      ACCESS_LOG="1")
    live.start()
    yield live
    live.stop()


@pytest.fixture
def people(redis):
    for name in ("ann", "bob"):
        accounts.create_user(redis, name, f"{name}-password")
        subscriptions.add(redis, name, ["news"], limit=10)
    return Bus(redis)


def notifications(events):
    return [(entry_id, data["title"]) for name, entry_id, data in events if name == "message"]


def test_live_events_with_privacy_and_heartbeats(server, people):
    bus = people
    ann = EventStream(server, issue_token("ann"))
    bob = EventStream(server, issue_token("bob"))
    try:
        for stream in (ann, bob):
            assert stream.response.headers["Content-Type"].startswith("text/event-stream")
            name, _id, outcome = stream.next_event()
            assert name == "replayed" and outcome["recovered"] is True and outcome["count"] == 0
        public = bus.publish("news.a", "for all")
        private = bus.publish("news.a", "for ann", user="ann")
        bus.publish("sports", "not followed")
        last = bus.publish("news.b", "last")
        assert notifications([ann.next_event() for _ in range(3)]) == \
            [(public, "for all"), (private, "for ann"), (last, "last")]
        assert notifications([bob.next_event() for _ in range(2)]) == \
            [(public, "for all"), (last, "last")]
        time.sleep(1.5)  # quiet for longer than SSE_HEARTBEAT (1 s here)
        after = bus.publish("news.a", "after a quiet while")
        assert notifications([ann.next_event()]) == [(after, "after a quiet while")]
        assert "heartbeat" in ann.comments
    finally:
        ann.close()
        bob.close()


def test_resume_with_last_event_id_exactly_once_across_a_restart(server, people):
    bus = people
    token = issue_token("ann")
    first = EventStream(server, token)
    sent = [bus.publish("news.a", f"n{i}") for i in range(2)]
    try:
        first.events_until("replayed")
        seen = notifications([first.next_event() for _ in range(2)])
        assert [i for i, _ in seen] == sent
    finally:
        first.close()
    server.stop()
    missed = [bus.publish("news.a", f"missed {i}") for i in range(3)]
    server.start()
    again = EventStream(server, token, header_last_id=sent[-1])
    try:
        events = again.events_until("replayed")
        assert [i for i, _ in notifications(events)] == missed
        assert events[-1][2] == {"recovered": True, "count": 3, "last_id": missed[-1]}
        live = bus.publish("news.a", "live")
        assert notifications([again.next_event()]) == [(live, "live")]
    finally:
        again.close()
    # ?last_id= does the same as the header.
    query = EventStream(server, token, last_id=missed[0])
    try:
        assert [i for i, _ in notifications(query.events_until("replayed"))] == missed[1:] + [live]
    finally:
        query.close()


def test_reset_past_history_and_bad_last_id(server, people, redis):
    bus = people
    old = bus.publish("news.a", "old")
    for i in range(50):
        bus.publish("news.a", f"filler {i}")
    redis.xtrim(STREAM, maxlen=5, approximate=False)
    stream = EventStream(server, issue_token("ann"), header_last_id=old)
    try:
        events = stream.events_until("replayed")
        assert events[0][0] == "reset"
        assert events[-1][2]["recovered"] is False
    finally:
        stream.close()
    bad = EventStream(server, issue_token("ann"), last_id="yesterday")
    assert bad.response.status_code == 400 and bad.response.json()["field"] == "last_id"
    nobody = EventStream(server)
    assert nobody.response.status_code == 401


def test_a_stream_token_opens_a_stream_only_briefly_and_never_leaks(server, people):
    bus = people
    token = issue_token("ann")
    reply = requests.post(server.url + "/api/stream-token", timeout=5,
                          headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 200 and reply.json()["expires_in"] == 2
    stream_token = reply.json()["token"]
    stream = EventStream(server, params={"token": stream_token})
    try:
        stream.events_until("replayed")
        sent = bus.publish("news.a", "by token")
        assert notifications([stream.next_event()]) == [(sent, "by token")]
    finally:
        stream.close()
    # Good for nothing else: not as a bearer token, and no other token in the URL.
    elsewhere = requests.get(server.url + "/api/notifications", timeout=5,
                             headers={"Authorization": f"Bearer {stream_token}"})
    assert elsewhere.status_code == 401
    assert EventStream(server, params={"token": token}).response.status_code == 401
    time.sleep(3.1)  # past its two seconds (itsdangerous counts whole seconds)
    expired = EventStream(server, params={"token": stream_token})
    assert expired.response.status_code == 401
    assert "expired" in expired.response.json()["error"]
    server.stop()  # flush the access log
    log = server.log_path.read_text()
    assert "/api/stream?token=[redacted]" in log
    assert stream_token not in log


def test_signing_out_everywhere_ends_a_stream(server, people, redis):
    stream = EventStream(server, issue_token("ann"))
    try:
        stream.events_until("replayed")
        accounts.revoke_tokens(redis, "ann")
        with pytest.raises((AssertionError, requests.RequestException)):
            for _ in range(20):  # heartbeats, then the end
                stream.next_event()
    finally:
        stream.close()


def test_a_stream_lives_through_a_redis_restart_and_resumes_exactly_once(tmp_path):
    redis_server = RedisServer(tmp_path)
    redis_server.start()
    client = redis_server.client()
    server = LiveServer(redis_server.url, tmp_path)
    stream = again = None
    try:
        accounts.create_user(client, "ann", "ann-password")
        subscriptions.add(client, "ann", ["news"], limit=10)
        server.start()
        token = server.token("ann", "ann-password")
        stream = EventStream(server, token, read_timeout=30)
        stream.events_until("replayed")
        before = Bus(client).publish("news.a", "before")
        assert notifications([stream.next_event()]) == [(before, "before")]
        redis_server.kill()
        redis_server.start()
        after = [Bus(redis_server.client()).publish("news.a", f"after {i}") for i in range(2)]
        assert notifications([stream.next_event() for _ in range(2)]) == \
            [(after[0], "after 0"), (after[1], "after 1")]
        again = EventStream(server, token, header_last_id=before)
        events = again.events_until("replayed")
        assert [i for i, _ in notifications(events)] == after
        assert events[-1][2]["recovered"] is True
    finally:
        for open_stream in (stream, again):
            if open_stream is not None:
                open_stream.close()
        server.stop()
        client.close()
        redis_server.stop()


def test_metrics_count_open_streams_and_their_deliveries(server, people):
    from tests.integration.ops.test_health_and_metrics import scrape, value
    bus = people
    streams = [EventStream(server, issue_token(name)) for name in ("ann", "bob")]
    try:
        for stream in streams:
            stream.events_until("replayed")
        bus.publish("news.a", "one")
        for stream in streams:
            stream.next_event()
        process = f"{socket.gethostname()}:{server.process.pid}"
        text = scrape(server)
        assert value(text, "herald_sse_streams", process=process) == 2
        assert value(text, "herald_sse_deliveries_total", process=process) == 2
        # Both streams were idle: the fan-out loop wrote to each itself.
        assert value(text, "herald_sse_direct_deliveries_total", process=process) == 2
        assert value(text, "herald_sse_slow_streams_ended_total", process=process) == 0
    finally:
        for stream in streams:
            stream.close()


def test_the_access_log_redacts_secrets_however_the_query_spells_them(server, people):
    """``?%74oken=`` is ``token`` to Werkzeug (names are percent-decoded), so it is read
    as the stream token; ``TOKEN=`` and the other secret names are not read but are
    redacted too: the access log never holds a credential, whatever its spelling."""
    token = issue_token("ann")
    stream_token = requests.post(server.url + "/api/stream-token", timeout=5,
                                 headers={"Authorization": f"Bearer {token}"}).json()["token"]

    def get(target, **headers):  # http.client sends the target as it is (requests requotes)
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        try:
            connection.request("GET", target, headers=headers)
            reply = connection.getresponse()
            return reply.status, reply.read()
        finally:
            connection.close()

    # Read as the token: past authentication, refused for its bad last_id.
    status, body = get(f"/api/stream?%74oken={stream_token}&last_id=nope")
    assert status == 400 and b"last_id" in body
    secrets = {"TOKEN": "secret-upper", "%54oKeN": "secret-mixed", "access_token": "secret-at",
               "api%5Fkey": "secret-apikey", "password": "secret-pw", "jwt": "secret-jwt",
               "tok%65n+": "secret-spaced", "%74oken%00": "secret-nul"}
    for name, value in secrets.items():
        get(f"/api/notifications?after=0&{name}={value}", Authorization=f"Bearer {token}")
    get("/socket.io/?EIO=4&transport=polling&token=secret-eio")
    get("/api/stream?token=secret-bad;token=secret-semi")
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:  # error log
        raw.sendall(b"GET /api/stream?a=1&token=secret-badversion HTTP/9.9\r\n\r\n")
        assert raw.recv(100).startswith(b"HTTP/1.1 400")
    server.stop()  # flush the access log
    log = server.log_path.read_text()
    assert "/api/stream?%74oken=[redacted]&last_id=nope" in log
    assert "after=0&TOKEN=[redacted]" in log
    assert "Invalid http version" in log
    for leaked in [stream_token, token, "secret-eio", "secret-bad", "secret-semi",
                   "secret-badversion", *secrets.values()]:
        assert leaked not in log


def test_a_closed_stream_stops_counting_against_its_address_at_once(redis_server, people,
                                                                     tmp_path):
    """MAX_SESSIONS_PER_ADDRESS counts open streams: one its client closed is let go when
    the socket closes, not at the next heartbeat's failed write (an hour here)."""
    from tests.integration.ops.test_health_and_metrics import scrape, value
    server = LiveServer(redis_server.url, tmp_path, MAX_SESSIONS_PER_ADDRESS="2",
                        SSE_HEARTBEAT="3600")
    server.start()
    try:
        process = f"{socket.gethostname()}:{server.process.pid}"
        for _ in range(5):  # more than the limit, one after another
            stream = EventStream(server, issue_token("ann"))
            assert stream.response.status_code == 200
            stream.events_until("replayed")
            stream.close()
            wait_for(lambda: value(scrape(server), "herald_sse_streams", process=process),
                     lambda open_now: open_now == 0, timeout=5, message="the stream let go")
        # Two at once are still the most.
        both = [EventStream(server, issue_token(name)) for name in ("ann", "bob")]
        try:
            assert [s.response.status_code for s in both] == [200, 200]
            assert EventStream(server, issue_token("ann")).response.status_code == 429
        finally:
            for stream in both:
                stream.close()
    finally:
        server.stop()
