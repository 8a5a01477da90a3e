"""A ``kind: "data"`` event is never collected into a digest, nor emailed as critical."""
import pytest

from app.digests import store, windows
from app.digests.collect import Collector
from app.stream.publish import Bus
from app.users import accounts


@pytest.mark.parametrize("critical_now", [False, True])
def test_a_data_event_is_never_collected(redis, critical_now):
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    record = store.create(redis, "ada", {"email": "ada@example.com", "topics": ["*"],
                                          "schedule": "hourly", "critical_now": critical_now})
    collector = Collector(redis)
    collector.ensure_group()
    bus = Bus(redis)
    bus.publish("board.card", "changed", kind="data", severity="critical", data={"id": 1})
    bus.publish("board.card", "changed too", kind="data", user="ada")
    alert = bus.publish("board.card", "an alert", severity="critical",
                        data={"kind": "data"})  # an alert, whatever its data holds
    assert collector.step(block_ms=50) == 3
    items, total = [], 0
    for window in redis.zrange(windows.windows_key(record["id"]), 0, -1):
        _counts, some, count = windows.read(redis, record["id"], window.decode())
        items, total = items + some, total + count
    outbox = redis.lrange(windows.OUTBOX, 0, -1)
    if critical_now:
        assert items == [] and total == 0
        assert len(outbox) == 1 and alert.encode() in outbox[0]
    else:
        assert outbox == [] and [i["id"] for i in items] == [alert] and total == 1


def test_wants_refuses_data_events_only():
    record = {"enabled": True, "owner": "ada", "created": 0, "min_severity": "info",
              "topics": ["*"], "exclude": []}
    alert = {"topic": "board.card", "title": "t", "severity": "info"}
    assert store.wants(record, alert)
    assert store.wants(record, dict(alert, data={"kind": "data"}))
    assert not store.wants(record, dict(alert, kind="data"))
    assert not store.wants(record, dict(alert, kind="data", severity="critical"))
