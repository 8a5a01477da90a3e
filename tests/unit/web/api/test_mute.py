"""Muting a topic: a "mute" rule in the user's preferences leaves that topic out of
their inbox (GET /api/notifications), reversibly; a more specific rule wins."""
import pytest

from app.stream.publish import Bus
from tests.unit.web.api.helpers import bearer, ids, subscribe


@pytest.fixture
def published(redis, user):
    subscribe(redis, "bob", ["*"])
    bus = Bus(redis)
    return {topic: bus.publish(topic, topic) for topic in
            ("crm.lead", "crm.vip.lead", "crmx.lead", "ops.deploy")}


def rules(client, *rules):
    reply = client.put("/api/preferences", headers=bearer("bob"),
                       json={"rules": [{"topic": t, "mode": m} for t, m in rules]})
    assert reply.status_code == 200, reply.get_json()


def test_a_muted_topic_leaves_the_inbox_and_comes_back_when_unmuted(client, published):
    everything = sorted(published.values())
    assert ids(client, bearer("bob")) == everything
    rules(client, ("crm", "mute"))
    assert ids(client, bearer("bob")) == [published["crmx.lead"], published["ops.deploy"]], \
        "crm and what is under it are muted; crmx is another topic"
    rules(client, ("crm", "mute"), ("crm.vip", "app"))
    assert ids(client, bearer("bob")) == sorted(
        [published["crm.vip.lead"], published["crmx.lead"], published["ops.deploy"]]), \
        "the more specific rule wins"
    assert ids(client, bearer("bob"), topic="crm") == [published["crm.vip.lead"]]
    rules(client)
    assert ids(client, bearer("bob")) == everything


def test_muting_everything_then_one_part_back(client, published):
    rules(client, ("*", "mute"), ("ops", "app"))
    assert ids(client, bearer("bob")) == [published["ops.deploy"]]


def test_a_mute_leaves_alerts_out_never_data_events(client, redis, user):
    """Muting is about what people are told: a page's Herald.sync still reads the
    records that changed under a muted topic (kind=data or kind=all)."""
    subscribe(redis, "bob", ["board"])
    bus = Bus(redis)
    alert = bus.publish("board.card.updated", "an alert")
    change = bus.publish("board.card.updated", "a change", kind="data", data={"id": 1})
    rules(client, ("board", "mute"))
    for kind, wanted in (("alert", []), ("data", [change]), ("all", [change])):
        assert ids(client, bearer("bob"), after=0, kind=kind) == wanted, kind
    rules(client)  # unmuted: the alert is back
    assert ids(client, bearer("bob"), after=0) == [alert]
