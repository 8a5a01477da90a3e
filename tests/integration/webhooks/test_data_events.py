"""A ``kind: "data"`` event is POSTed to webhooks like any notification, unchanged."""
import json

from app.stream.publish import Bus
from tests.helpers.webhooks import register
from tests.support import wait_until


def test_a_data_event_is_delivered_as_stored(client, admin_token, allow_loopback, redis,
                                             receivers, start_worker):
    receiver = receivers()
    register(client, admin_token, receiver.url, topics=["board"])
    start_worker()
    bus = Bus(redis)
    data = bus.publish("board.card.7", "Card 7", kind="data", data={"id": 7, "version": 2})
    alert = bus.publish("board.card.7", "Card 7 was archived")
    wait_until(lambda: len(receiver.requests) >= 2, timeout=10, message="both POSTs")
    bodies = [request["body"] for request in receiver.requests]
    assert bodies[0].startswith(b'{"id":"' + data.encode() + b'","kind":"data",')
    assert [json.loads(b)["id"] for b in bodies] == [data, alert]
    assert json.loads(bodies[0])["data"] == {"id": 7, "version": 2}
    assert "kind" not in json.loads(bodies[1])
