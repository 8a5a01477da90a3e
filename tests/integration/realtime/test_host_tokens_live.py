"""Host-app tokens (JWTs) on a live server: Socket.IO connect, limits, privacy, REST.

The users here (carol, dave, erin) have no Herald account: the host app
vouches for them by signing their tokens.
"""
import pytest
import requests

from app.stream.publish import Bus
from app.users import subscriptions
from tests.helpers.keys import SECRET, host_token, rsa_pair, unsigned_token
from tests.support import Listener, LiveServer, marked, refusal, wait_until

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
