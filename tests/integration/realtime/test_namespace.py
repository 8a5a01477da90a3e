"""The Socket.IO contract at /notifications, against a live gevent server.

Clients are python-socketio's own, over real websockets; publishing goes
through the REST API, so each test covers the whole path:
REST -> Redis -> relay -> rooms -> websocket.
"""
import time

import pytest
import socketio

from app.users import accounts
from app.web.auth import tokens
from tests.support import NAMESPACE, Listener, marked, wait_until


@pytest.fixture
def tokens_of(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    accounts.create_user(redis, "ben", "ben-password")
    return {"ann": live_server.token("ann", "ann-password"),
            "ben": live_server.token("ben", "ben-password")}


@pytest.fixture
def clients():
    opened = []
    yield opened
    for listener in opened:
        listener.close()


def connect(live_server, clients, token):
    listener = Listener(live_server, token)
    clients.append(listener)
    return listener


def refused(live_server, auth):
    client = socketio.Client(reconnection=False)
    try:
        with pytest.raises(socketio.exceptions.ConnectionError):
            client.connect(live_server.url, namespaces=[NAMESPACE], auth=auth,
                           transports=["websocket"], wait_timeout=5)
    finally:
        client.disconnect()


def test_connect_without_a_good_token_is_refused(live_server, tokens_of, redis):
    refused(live_server, None)
    refused(live_server, {})
    refused(live_server, {"token": "forged"})
    refused(live_server, {"token": tokens.issue("some-other-secret", "ann")})
    refused(live_server, {"token": tokens.issue("test-secret-key", "ghost")})


def rest_publish(live_server, api_key):
    """``publish(topic, title, **fields)`` through the live server's REST API."""
    return lambda topic, title, **fields: live_server.publish(api_key, topic=topic, title=title,
                                                              **fields)


def test_expired_token_is_refused(redis_server, redis, tmp_path):
    from tests.support import LiveServer
    accounts.create_user(redis, "ann", "ann-password")
    server = LiveServer(redis_server.url, tmp_path, TOKEN_TTL="1")
    server.start()
    try:
        token = server.token("ann", "ann-password")
        Listener(server, token).close()  # fresh: accepted
        time.sleep(2.2)
        refused(server, {"token": token})
    finally:
        server.stop()


def test_subscribe_acks_with_the_full_list(live_server, tokens_of, clients):
    ann = connect(live_server, clients, tokens_of["ann"])
    assert ann.call("subscribe", {"topics": ["spark"]}) == {"ok": True, "topics": ["spark"]}
    assert ann.call("subscribe", {"topics": ["ops.db", "spark"]}) == {
        "ok": True, "topics": ["ops.db", "spark"]}
    assert ann.call("unsubscribe", {"topics": ["spark"]}) == {"ok": True, "topics": ["ops.db"]}
    assert ann.call("subscribe", {"topics": []}) == {"ok": True, "topics": ["ops.db"]}


@pytest.mark.parametrize("payload,words", [
    ({"topics": ["Bad Topic"]}, "topics[0]"),
    ({"topics": "spark"}, "payload"),
    ({}, "payload"),
    ("spark", "payload"),
    ({"topics": ["ok", 5]}, "topics[1]"),
])
def test_bad_subscribe_is_answered_with_an_error(live_server, tokens_of, clients, payload, words):
    ann = connect(live_server, clients, tokens_of["ann"])
    ack = ann.call("subscribe", payload)
    assert ack["ok"] is False and words in ack["error"]
    assert ann.call("subscribe", {"topics": []}) == {"ok": True, "topics": []}


def test_routing_by_topic_prefix(live_server, tokens_of, clients, api_key):
    ann = connect(live_server, clients, tokens_of["ann"])
    ann.call("subscribe", {"topics": ["spark", "ops.db"]})
    for topic in ["spark", "spark.job.succeeded", "sparkle", "ops", "ops.db.slow", "ops.dbx"]:
        live_server.publish(api_key, topic=topic, title=topic)
    marked(rest_publish(live_server, api_key), ann, "ann")
    assert ann.topics() == ["spark", "spark.job.succeeded", "ops.db.slow", "test.marker"]


def test_overlapping_subscriptions_deliver_once(live_server, tokens_of, clients, api_key):
    ann = connect(live_server, clients, tokens_of["ann"])
    ann.call("subscribe", {"topics": ["*", "spark", "spark.job"]})
    sent = live_server.publish(api_key, topic="spark.job.done", title="once")
    marker = marked(rest_publish(live_server, api_key), ann, "ann")
    assert ann.ids() == [sent, marker]


def test_unsubscribe_stops_delivery(live_server, tokens_of, clients, api_key):
    ann = connect(live_server, clients, tokens_of["ann"])
    ann.call("subscribe", {"topics": ["news"]})
    first = live_server.publish(api_key, topic="news.a", title="a")
    wait_until(lambda: ann.ids() == [first], message="first")
    ann.call("unsubscribe", {"topics": ["news"]})
    live_server.publish(api_key, topic="news.b", title="b")
    marker = marked(rest_publish(live_server, api_key), ann, "ann")
    assert ann.ids() == [first, marker]


def test_private_notifications_reach_their_user_only(live_server, tokens_of, clients, api_key):
    ann = connect(live_server, clients, tokens_of["ann"])
    ben = connect(live_server, clients, tokens_of["ben"])
    ann.call("subscribe", {"topics": ["*"]})
    ben.call("subscribe", {"topics": ["*"]})
    for_ann = live_server.publish(api_key, topic="billing.invoice", title="yours", user="ann")
    for_ben = live_server.publish(api_key, topic="billing.invoice", title="yours", user="ben")
    public = live_server.publish(api_key, topic="billing.rates", title="everyone")
    # Delivered before the unsubscribe (rooms count as they are at fan-out).
    wait_until(lambda: public in ann.ids(), message="the public one, before the unsubscribe")
    # A private one also reaches a user subscribed to nothing.
    ann.call("unsubscribe", {"topics": ["*"]})
    also_ann = live_server.publish(api_key, topic="other", title="still yours", user="ann")
    publish = rest_publish(live_server, api_key)
    ann_marker, ben_marker = marked(publish, ann, "ann"), marked(publish, ben, "ben")
    assert ann.ids() == [for_ann, public, also_ann, ann_marker]
    assert ben.ids() == [for_ben, public, ben_marker]


def test_subscriptions_are_the_users_across_tabs(live_server, tokens_of, clients, api_key):
    tab1 = connect(live_server, clients, tokens_of["ann"])
    tab2 = connect(live_server, clients, tokens_of["ann"])
    tab1.call("subscribe", {"topics": ["deploy"]})
    sent = live_server.publish(api_key, topic="deploy.web", title="to both tabs")
    wait_until(lambda: tab1.ids() == [sent] and tab2.ids() == [sent], message="both tabs")
    tab1.close()
    tab3 = connect(live_server, clients, tokens_of["ann"])  # a reconnect keeps them
    assert tab3.call("subscribe", {"topics": []})["topics"] == ["deploy"]


def test_notification_envelope_on_the_wire(live_server, tokens_of, clients, api_key):
    ann = connect(live_server, clients, tokens_of["ann"])
    ann.call("subscribe", {"topics": ["wire"]})
    sent = live_server.publish(api_key, topic="wire.check", title="<b>t</b>", body="b",
                               severity="warning", data={"k": [1, 2]}, correlation_id="c1")
    wait_until(lambda: ann.received, message="delivery")
    [envelope] = ann.received
    assert envelope.pop("ts").endswith("Z")
    assert envelope == {"id": sent, "topic": "wire.check", "title": "<b>t</b>", "body": "b",
                        "severity": "warning", "data": {"k": [1, 2]}, "correlation_id": "c1"}
