"""GET /api/notifications: the caller's feed, in id order, and nothing else."""
import pytest

from app.stream.publish import Bus
from app.users import subscriptions
from tests.support import issue_token


def bearer(name):
    return {"Authorization": f"Bearer {issue_token(name)}"}


@pytest.fixture
def bus(redis):
    return Bus(redis)


def feed(client, name, **params):
    reply = client.get("/api/notifications", headers=bearer(name), query_string=params)
    assert reply.status_code == 200, reply.get_data(as_text=True)
    return reply.get_json()["notifications"]


def test_feed_is_subscribed_topics_and_own_private_ones(client, redis, bus, user, admin):
    subscriptions.add(redis, user[0], ["spark"], limit=10)
    wanted = [bus.publish("spark.job.started", "a"),
              bus.publish("spark", "b"),
              bus.publish("ops.x", "mine", user=user[0])]
    bus.publish("sparkle", "not a match")
    bus.publish("spark.job", "someone else's", user=admin[0])
    bus.publish("ops.y", "not subscribed")

    got = feed(client, user[0])
    assert [n["id"] for n in got] == wanted
    assert got[2]["user"] == user[0] and got[0]["ts"]


def test_after_and_limit_page_through_in_order(client, redis, bus, user):
    subscriptions.add(redis, user[0], ["*"], limit=10)
    ids = [bus.publish("load.page", f"n{i}") for i in range(25)]
    assert [n["id"] for n in feed(client, user[0], after=ids[4], limit=10)] == ids[5:15]
    assert [n["id"] for n in feed(client, user[0], after=ids[-1])] == []
    # Without `after`: the newest `limit`, oldest first.
    assert [n["id"] for n in feed(client, user[0], limit=3)] == ids[-3:]


def test_filtering_scans_past_many_invisible_entries(client, redis, bus, user):
    subscriptions.add(redis, user[0], ["rare"], limit=10)
    first = bus.publish("rare.event", "first")
    for i in range(1200):
        bus.publish("noise", f"n{i}")
    last = bus.publish("rare.event", "last")
    assert [n["id"] for n in feed(client, user[0], after="0-0")] == [first, last]
    assert [n["id"] for n in feed(client, user[0], limit=2)] == [first, last]


@pytest.mark.parametrize("params,field", [
    ({"after": "yesterday"}, "after"),
    ({"limit": "0"}, "limit"),
    ({"limit": "1001"}, "limit"),
    ({"limit": "ten"}, "limit"),
    ({"limit": "²"}, "limit"),                       # a digit to str.isdigit, not to int()
    ({"after": "0-20000000000000000000"}, "after"),  # past Redis's 64-bit halves (found by fuzzing)
    ({"after": "١٢-0"}, "after"),                   # digits of another script
])
def test_bad_parameters_are_400(client, user, params, field):
    reply = client.get("/api/notifications", headers=bearer(user[0]), query_string=params)
    assert reply.status_code == 400
    assert reply.get_json()["error"].startswith(f"{field}: ")


def test_needs_a_user(client, api_key, redis):
    assert client.get("/api/notifications").status_code == 401
    reply = client.get("/api/notifications", headers={"Authorization": "Bearer nope"})
    assert reply.status_code == 401
    reply = client.get("/api/notifications", headers={"Authorization": f"Bearer {api_key}"})
    assert reply.status_code == 403
