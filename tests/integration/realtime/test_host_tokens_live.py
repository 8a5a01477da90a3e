"""Host-app tokens (JWTs) on a live server: Socket.IO connect, limits, privacy, REST.

The users here (carol, dave, erin) have no Herald account: the host app
vouches for them by signing their tokens.
"""
import pytest
import requests

from app.stream.publish import Bus
from app.users import subscriptions
from tests.helpers.keys import SECRET, host_token, rsa_pair, unsigned_token
from tests.support import EventStream, Listener, LiveServer, marked, refusal, wait_for, wait_until

AUDIENCE = "herald"


@pytest.fixture(scope="module")
def rsa_key(tmp_path_factory):
    private, public = rsa_pair()
    path = tmp_path_factory.mktemp("jwt") / "public.pem"
    path.write_bytes(public)
    return private, path


@pytest.fixture(scope="module")
def server(redis_server, rsa_key, tmp_path_factory):
    server = LiveServer(redis_server.url, tmp_path_factory.mktemp("web"), JWT_SECRET=SECRET,
                        JWT_PUBLIC_KEY=str(rsa_key[1]), JWT_AUDIENCE=AUDIENCE)
    server.start()
    yield server
    server.stop()


def token(sub, **claims):
    claims.setdefault("aud", AUDIENCE)
    return host_token(sub, **claims)


@pytest.fixture
def bus(redis):
    return Bus(redis)


def listen(server, jwt, **options):
    return Listener(server, jwt, **options)


def test_hs256_and_rs256_tokens_connect_and_receive(server, redis, bus, rsa_key):
    subscriptions.add(redis, "carol", ["news"], limit=10)
    subscriptions.add(redis, "dan", ["news"], limit=10)
    carol = listen(server, token("carol"))
    dan = listen(server, token("dan", key=rsa_key[0], algorithm="RS256"))
    try:
        sent = bus.publish("news.a", "hello")
        wait_until(lambda: carol.ids() == [sent] and dan.ids() == [sent], message="delivery")
    finally:
        carol.close()
        dan.close()


@pytest.mark.parametrize("make, reason", [
    (lambda key: token("carol", ttl=-30), "unauthorized: token has expired"),
    (lambda key: token("carol", key="some-other-secret-of-32-bytes-or-more"),
     "unauthorized: token signature does not match the HS256 key"),
    (lambda key: unsigned_token("carol"), "unauthorized: token is unsigned (alg 'none')"),
    (lambda key: token("carol", ttl=None), "unauthorized: token has no 'exp' claim"),
    (lambda key: token("carol", aud="another-service"), "unauthorized: token audience is not 'herald'"),
    (lambda key: host_token("carol", key=key, algorithm="RS512", aud=AUDIENCE),
     "unauthorized: token is signed with RS512, which is not accepted here"),
])
def test_bad_tokens_are_refused_at_connect_with_the_reason(server, rsa_key, make, reason):
    assert refusal(server, {"token": make(rsa_key[0])}).startswith(reason)


def test_a_topics_claim_limits_what_the_connection_subscribes_to_and_sees(server, redis, bus):
    subscriptions.add(redis, "carol", ["*"], limit=10)  # from some earlier, unlimited page
    limited = listen(server, token("carol", topics=["board"]))
    unlimited = listen(server, token("carol"))
    try:
        refused = limited.call("subscribe", {"topics": ["ops"]})
        assert refused == {"ok": False, "error": "topics: 'ops' is outside what this "
                                                 "connection's token allows (board)"}
        assert limited.call("unsubscribe", {"topics": ["*"]})["ok"] is False
        assert limited.call("subscribe", {"topics": ["board.42"]})["ok"] is True
        ops = bus.publish("ops.deploy", "not for the board page")
        board = bus.publish("board.42.updated", "card moved")
        private = bus.publish("ops.secret", "yours, whatever the limits", user="carol")
        marker = bus.publish("test.marker", "marker", user="carol")  # reaches both
        wait_until(lambda: marker in unlimited.ids() and marker in limited.ids(), message="marker")
        assert unlimited.ids() == [ops, board, private, marker]
        assert limited.ids() == [board, private, marker]
        # The REST feed with the limited token is limited the same way.
        feed = requests.get(server.url + "/api/notifications?after=0", timeout=5,
                            headers={"Authorization": "Bearer " + token("carol", topics=["board"])})
        assert [n["id"] for n in feed.json()["notifications"]] == [board, private, marker]
    finally:
        limited.close()
        unlimited.close()


def test_a_limited_connection_follows_subscription_changes_only_inside_its_limits(server, redis, bus):
    limited = listen(server, token("carol", topics=["board"]))
    unlimited = listen(server, token("carol"))
    try:
        assert unlimited.call("subscribe", {"topics": ["*"]})["ok"]  # another tab, everything
        first = marked(bus.publish, limited, "carol")
        outside, inside = bus.publish("billing.invoice", "outside"), bus.publish("board.1", "inside")
        # Delivered before the unsubscribe below: the rooms are those of the moment the
        # relay fans a notification out, and the unsubscribe could otherwise come first.
        between = marked(bus.publish, limited, "carol")
        assert unlimited.call("unsubscribe", {"topics": ["*"]})["ok"]
        second = marked(bus.publish, limited, "carol")
        bus.publish("board.2", "nobody subscribed now")
        third = marked(bus.publish, limited, "carol")
        assert limited.ids() == [first, inside, between, second, third]
        wait_until(lambda: third in unlimited.ids(), message="the last marker")
        assert unlimited.ids() == [first, outside, inside, between, second, third]
    finally:
        limited.close()
        unlimited.close()


def test_a_private_notification_reaches_only_its_sub_live_on_replay_and_over_rest(server, redis, bus):
    for user in ("carol", "dave"):
        subscriptions.add(redis, user, ["*"], limit=10)
    carol, dave = listen(server, token("carol")), listen(server, token("dave"))
    try:
        before = bus.publish("news.public", "for everyone")
        wait_until(lambda: len(carol.ids()) == 1 and len(dave.ids()) == 1, message="public")
        secret = bus.publish("news.private", "for carol", user="carol")
        marker = bus.publish("news.public", "marker")
        wait_until(lambda: marker in carol.ids() and marker in dave.ids(), message="marker")
        assert carol.ids() == [before, secret, marker] and dave.ids() == [before, marker]
    finally:
        carol.close()
        dave.close()
    replayed = {user: listen(server, token(user), last_id=before) for user in ("carol", "dave")}
    try:
        wait_until(lambda: all(lst.replays for lst in replayed.values()), message="replays")
        assert replayed["carol"].ids() == [secret, marker]
        assert replayed["dave"].ids() == [marker]
    finally:
        for listener in replayed.values():
            listener.close()
    for user, expected in (("carol", [before, secret, marker]), ("dave", [before, marker])):
        reply = requests.get(server.url + "/api/notifications", params={"after": "0"}, timeout=5,
                             headers={"Authorization": "Bearer " + token(user)})
        assert [n["id"] for n in reply.json()["notifications"]] == expected


def test_last_id_zero_replays_all_history_then_says_where_it_is_live(server, redis, bus):
    subscriptions.add(redis, "erin", ["news"], limit=10)
    sent = [bus.publish("news.a", f"n{i}") for i in range(3)]
    listener = listen(server, token("erin"), last_id="0")
    try:
        wait_until(lambda: listener.replays, message="replayed")
        assert listener.ids() == sent
        assert listener.replays == [{"recovered": True, "count": 3, "last_id": sent[-1]}]
    finally:
        listener.close()


def test_a_connection_without_last_id_learns_where_it_went_live(server, redis, bus):
    """So that a client that saw nothing yet still has a cursor to resume from."""
    subscriptions.add(redis, "erin", ["news"], limit=10)
    newest = bus.publish("other", "before the connection")
    listener = listen(server, token("erin"))
    try:
        wait_until(lambda: listener.replays, message="replayed")
        assert listener.replays == [{"recovered": True, "count": 0, "last_id": newest}]
    finally:
        listener.close()


def test_read_state_with_a_host_token(server, redis, bus):
    subscriptions.add(redis, "erin", ["news"], limit=10)
    sent = bus.publish("news.a", "read me")
    headers = {"Authorization": "Bearer " + token("erin")}
    changed = requests.post(server.url + "/api/read-state", json={"ids": [sent]}, headers=headers,
                            timeout=5)
    assert changed.status_code == 200 and changed.json()["ids"] == [sent]
    state = requests.get(server.url + "/api/read-state", headers=headers, timeout=5).json()
    assert state == {"upto": None, "ids": [sent], "unread": [], "seen": None, "version": 1}
    # A host-app user is never an admin: publishing is for API keys and admins.
    refused = requests.post(server.url + "/api/notifications", headers=headers, timeout=5,
                            json={"topic": "news", "title": "x"})
    assert refused.status_code == 403


# A host app's user ids are opaque strings (docs/contract.md, "Tokens from the host app"):
# its primary keys, prefixed ones, e-mail addresses, names with accents, 255 characters;
# among them ids that begin or end another (4 / 42, user:4 / user:42, a / a:b), which must
# never read one another's private notifications.
USER_IDS = ["42", "4", "user:42", "user:4", "alice@example.com", "Zo\u00eb M\u00fcller", "a",
            "a:b", "b:a", "x" * 255, "x" * 254, "tab\there", "line\nbreak",
            "550e8400-e29b-41d4-a716-446655440000"]


def test_any_string_sub_gets_its_own_private_notifications_everywhere(server, redis, api_key):
    listeners = {user: listen(server, token(user)) for user in USER_IDS}
    try:
        for listener in listeners.values():  # the real path: the subscribe event
            assert listener.call("subscribe", {"topics": ["news"]}) == {"ok": True, "topics": ["news"]}
        before = server.publish(api_key, topic="news.public", title="before")
        private = {user: server.publish(api_key, topic="news.private", title=f"private {n}",
                                        user=user)
                   for n, user in enumerate(USER_IDS)}  # over REST, as a publisher addresses them
        marker = server.publish(api_key, topic="news.public", title="marker")
        wait_until(lambda: all(marker in lst.ids() for lst in listeners.values()),
                   message="the marker on every connection")
        for user, listener in listeners.items():
            assert listener.ids() == [before, private[user], marker], user
            mine = [n for n in listener.received if n["id"] == private[user]]
            assert mine[0]["user"] == user  # as it was sent: "42" stays a string

        # Presence: every one of them online, each id a string as it was given.
        headers = {"Authorization": "Bearer " + token("42")}
        wait_for(lambda: sorted(p["user"] for p in requests.get(
                     server.url + "/api/presence", headers=headers, timeout=5).json()["online"]),
                 lambda online: online == sorted(USER_IDS), message="everyone online")

        # Read state: one user's change reaches that user's tabs only.
        changed = requests.post(server.url + "/api/read-state", json={"ids": [private["user:4"]]},
                                headers={"Authorization": "Bearer " + token("user:4")}, timeout=5)
        assert changed.status_code == 200, changed.text
        wait_until(lambda: listeners["user:4"].reads, message="the read event")
        for user in ("user:42", "4", "a:b"):
            state = requests.get(server.url + "/api/read-state", timeout=5,
                                 headers={"Authorization": "Bearer " + token(user)}).json()
            assert state["ids"] == [], user
        assert all(not listeners[u].reads for u in USER_IDS if u != "user:4")
    finally:
        for listener in listeners.values():
            listener.close()

    for user in USER_IDS:
        expected = [private[user], marker]
        replayed = listen(server, token(user), last_id=before)  # Socket.IO replay
        try:
            wait_until(lambda: replayed.replays, message=f"the replay of {user!r}")
            assert replayed.ids() == expected, user
        finally:
            replayed.close()
        stream = EventStream(server, token(user), last_id=before)  # Server-Sent Events
        try:
            events = stream.events_until("replayed")
            assert [i for name, i, _data in events if name == "message"] == expected, user
        finally:
            stream.close()
        made = requests.post(server.url + "/api/stream-token", timeout=5,
                             headers={"Authorization": "Bearer " + token(user)}).json()
        stream = EventStream(server, params={"token": made["token"]}, last_id=before)  # EventSource's
        try:
            events = stream.events_until("replayed")
            assert [i for name, i, _data in events if name == "message"] == expected, user
        finally:
            stream.close()
        feed = requests.get(server.url + "/api/notifications", params={"after": before},
                            headers={"Authorization": "Bearer " + token(user)}, timeout=5)
        assert [n["id"] for n in feed.json()["notifications"]] == expected, user
        one = requests.get(server.url + f"/api/notifications/{private[user]}", timeout=5,
                           headers={"Authorization": "Bearer " + token(user)})
        assert one.status_code == 200 and one.json()["user"] == user
        other = "a" if user != "a" else "a:b"
        assert requests.get(server.url + f"/api/notifications/{private[user]}", timeout=5,
                            headers={"Authorization": "Bearer " + token(other)}).status_code == 404


@pytest.mark.parametrize("sub, words", [
    ("x" * 256, "token's 'sub' claim: must be a string of 1-255 characters"),
    ("", "token's 'sub' claim: must be a string of 1-255 characters"),
    ("\ud800", "token's 'sub' claim: must be valid Unicode"),
    (42, "token's 'sub' claim: must be a string"),
])
def test_a_sub_that_is_no_user_id_is_refused_naming_the_claim(server, sub, words):
    assert refusal(server, {"token": token(sub)}).startswith(f"unauthorized: {words}")
    reply = requests.get(server.url + "/api/notifications", timeout=5,
                         headers={"Authorization": "Bearer " + token(sub)})
    assert reply.status_code == 401 and words in reply.json()["error"]


@pytest.mark.parametrize("user, words", [
    ("x" * 256, "user: must be a string of 1-255 characters"),
    ("", "user: must be a string of 1-255 characters"),
    (42, "user: must be a string"),
])
def test_a_publish_to_a_user_that_is_no_user_id_is_refused_naming_the_field(server, api_key, user,
                                                                            words):
    reply = requests.post(server.url + "/api/notifications", timeout=5,
                          json={"topic": "news", "title": "x", "user": user},
                          headers={"Authorization": f"Bearer {api_key}"})
    assert reply.status_code == 400 and reply.json()["error"].startswith(words), reply.text
    assert reply.json()["field"] == "user"
