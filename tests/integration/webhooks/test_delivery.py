"""Webhook delivery end to end: the real worker process POSTing to real loopback receivers.

Backoff is shortened for tests (WEBHOOK_BACKOFF_BASE=0.05 s, WEBHOOK_BACKOFF_MAX=0.5 s,
see tests/helpers/webhooks.py), so a receiver down for DOWN_SECONDS (30, as the issue asks;
WEBHOOK_TEST_DOWN_SECONDS changes it) is retried many times meanwhile.
"""
import hashlib
import hmac
import json
import os
import time

import pytest

from app.stream.publish import Bus
from app.stream.shards import configured
from app.webhooks import store
from tests.helpers.webhooks import register
from tests.support import wait_for, wait_until

DOWN_SECONDS = float(os.environ.get("WEBHOOK_TEST_DOWN_SECONDS", "30"))


def publish(redis, count, topic="ops.db", **fields):
    bus = Bus(redis)
    return [bus.publish(topic, f"n{i}", **fields) for i in range(count)]


def independent_check(secret, body, header, delivery):
    """The receiver's side, written out as docs/webhooks.md shows it (not Herald's code)."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    expected = hmac.new(secret.encode(), f"{parts['t']}.{delivery}.".encode() + body,
                        hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"]) and abs(time.time() - int(parts["t"])) < 300


def test_signed_posts_with_stable_delivery_ids(client, admin_token, allow_loopback, redis,
                                               receivers, start_worker):
    receiver = receivers()
    endpoint = register(client, admin_token, receiver.url, topics=["ops"], min_severity="warning")
    start_worker()
    bus = Bus(redis)
    skipped_topic = bus.publish("billing.paid", "not for it", severity="error")
    skipped_severity = bus.publish("ops.db", "too mild", severity="info")
    wanted = bus.publish("ops.db", "Replica lagging", severity="error", data={"lag": 12})
    wait_until(lambda: receiver.requests, timeout=10, message="the POST")
    [request] = receiver.requests
    headers, body = request["headers"], request["body"]
    delivery = headers["Herald-Delivery"]
    assert independent_check(endpoint["secret"], body, headers["Herald-Signature"], delivery)
    assert not independent_check("another-secret-of-some-length", body,
                                 headers["Herald-Signature"], delivery)
    assert not independent_check(endpoint["secret"], body, headers["Herald-Signature"],
                                 delivery + "-replayed")
    assert headers["Content-Type"] == "application/json"
    assert headers["User-Agent"].startswith("Herald-Webhooks/")
    assert headers["Herald-Delivery"] == f"{endpoint['id']}.{wanted}"
    assert request["path"] == "/hook?x=1"
    envelope = json.loads(body)
    assert (envelope["id"], envelope["title"], envelope["data"]) == (wanted, "Replica lagging",
                                                                      {"lag": 12})
    # Published before it and in order, the other two would have come first: they were not sent.
    assert [d for d, _ in receiver.deliveries()] == [f"{endpoint['id']}.{wanted}"]
    assert skipped_topic and skipped_severity
    wait_until(lambda: client.get(f"/api/webhooks/{endpoint['id']}",
                                  headers={"Authorization": f"Bearer {admin_token}"}
                                  ).get_json()["delivered"] == 1, message="the delivered count")


def test_a_receiver_down_then_back_gets_everything_in_order_exactly_once(
        client, admin_token, allow_loopback, redis, receivers, start_worker):
    receiver = receivers()
    endpoint = register(client, admin_token, receiver.url)
    start_worker()
    first = publish(redis, 5, topic="ops.before")
    wait_until(lambda: len(receiver.requests) == 5, timeout=10, message="the first five")
    receiver.stop()
    during = publish(redis, 20, topic="ops.during")
    deadline = time.monotonic() + DOWN_SECONDS
    wait_until(lambda: store.state(redis, endpoint["id"])["retrying"] >= 2, timeout=10,
               message="failed attempts while the receiver is down")
    while time.monotonic() < deadline:
        time.sleep(0.1)
    receiver.start()
    after = publish(redis, 5, topic="ops.after")
    expected = first + during + after
    wait_until(lambda: len(receiver.requests) >= len(expected), timeout=20,
               message="everything after the receiver came back")
    ids = [e["id"] for _, e in receiver.deliveries()]
    assert ids == expected  # in order, and exactly once: no duplicate at all
    # The worker acknowledges the last one only once the receiver's answer is back.
    state = wait_for(lambda: store.state(redis, endpoint["id"]), lambda s: s["pending"] == 0,
                     message="the last delivery acknowledged")
    assert state["parked"] == 0
    assert state["failures"] >= 2 and "ConnectionRefusedError" in state["last_error"]


def test_a_hanging_receiver_does_not_delay_another(client, admin_token, allow_loopback, redis,
                                                    receivers, start_worker):
    hanging, healthy = receivers(), receivers()
    hanging.hang = True
    register(client, admin_token, hanging.url)
    register(client, admin_token, healthy.url)
    start_worker(WEBHOOK_TIMEOUT="60")
    ids = publish(redis, 20)
    sent_at = time.time()
    wait_until(lambda: len(healthy.requests) == 20, timeout=15, message="the healthy receiver")
    # All 20 reached the healthy receiver while the hanging one still holds its first request.
    assert len(hanging.requests) == 1 and not hanging.released.is_set()
    assert [e["id"] for _, e in healthy.deliveries()] == ids
    latencies = sorted(r["at"] - sent_at for r in healthy.requests)
    print(f"healthy receiver beside a hanging one: last of 20 after {latencies[-1] * 1000:.0f} ms")
    hanging.released.set()
    wait_until(lambda: len(hanging.requests) == 20, timeout=15, message="the hanging one, released")
    assert [e["id"] for e in hanging.unique()] == ids


def test_killing_the_worker_mid_delivery_loses_nothing(client, admin_token, allow_loopback, redis,
                                                       receivers, start_worker):
    receiver = receivers(hang_on=4)
    register(client, admin_token, receiver.url)
    worker = start_worker()
    ids = publish(redis, 12)
    wait_until(lambda: len(receiver.requests) == 4, timeout=15, message="three deliveries and a 4th")
    worker.kill()  # SIGKILL, with the 4th request under way at the receiver
    receiver.released.set()
    more = publish(redis, 3)  # published while no worker runs
    start_worker()
    wait_until(lambda: len(receiver.unique()) == 15, timeout=30, message="everything, after restart")
    assert [e["id"] for e in receiver.unique()] == ids + more
    # The 4th was never answered: sent again, as the same delivery (at least once).
    assert [d for d, _ in receiver.deliveries()].count(receiver.deliveries()[3][0]) == 2
    # Duplicates are the same delivery (same id, same body): droppable.
    bodies = {}
    for request in receiver.requests:
        delivery = request["headers"]["Herald-Delivery"]
        assert bodies.setdefault(delivery, request["body"]) == request["body"]


def test_a_4xx_is_parked_after_the_documented_retries(client, admin_token, allow_loopback, redis,
                                                      receivers, start_worker):
    receiver = receivers(status=400)
    endpoint = register(client, admin_token, receiver.url)
    start_worker()  # WEBHOOK_4XX_RETRIES: 3 by default, so 4 attempts
    [first, second] = publish(redis, 2)
    auth = {"Authorization": f"Bearer {admin_token}"}
    wait_until(lambda: client.get(f"/api/webhooks/{endpoint['id']}", headers=auth)
               .get_json()["parked"] == 2, timeout=15, message="both parked")
    deliveries = [d for d, _ in receiver.deliveries()]
    assert deliveries == [f"{endpoint['id']}.{first}"] * 4 + [f"{endpoint['id']}.{second}"] * 4
    state = client.get(f"/api/webhooks/{endpoint['id']}", headers=auth).get_json()
    assert (state["pending"], state["parked"], state["last_error"]) == (0, 2, "HTTP 400")
    failed = client.get(f"/api/webhooks/{endpoint['id']}/failed", headers=auth).get_json()["failed"]
    assert [(f["notification"], f["attempts"], f["error"]) for f in failed] == [
        (first, 4, "HTTP 400"), (second, 4, "HTTP 400")]

    receiver.status = 200  # fixed at the receiver: deliver the parked ones again
    reply = client.post(f"/api/webhooks/{endpoint['id']}/retry", headers=auth)
    assert reply.get_json() == {"requeued": 2}
    wait_until(lambda: len(receiver.requests) == 10, timeout=15, message="the retried ones")
    assert [e["id"] for _, e in receiver.deliveries()[8:]] == [first, second]
    # Counted as delivered once the receiver's 200 is back at the worker, after the request.
    state = wait_for(lambda: client.get(f"/api/webhooks/{endpoint['id']}", headers=auth).get_json(),
                     lambda s: s["delivered"] == 2, message="both counted as delivered")
    assert state["parked"] == 0
    assert state["last_success_at"] is not None


def test_a_redirect_is_not_followed(client, admin_token, allow_loopback, redis, receivers,
                                    start_worker):
    receiver = receivers(status=302)
    endpoint = register(client, admin_token, receiver.url)
    start_worker(WEBHOOK_4XX_RETRIES="0")
    [only] = publish(redis, 1)
    wait_until(lambda: store.state(redis, endpoint["id"])["parked"] == 1, timeout=10,
               message="the redirect parked")
    assert len(receiver.requests) == 1  # the Location (itself) was not requested
    assert store.parked(redis, endpoint["id"])[0]["error"] == "HTTP 302 (redirects are not followed)"
    assert store.parked(redis, endpoint["id"])[0]["notification"] == only


@pytest.mark.parametrize("marked_private", [False, True])
def test_private_notifications_leave_only_when_allowed(client, admin_token, allow_loopback, redis,
                                                       receivers, start_worker, marked_private):
    receiver = receivers()
    register(client, admin_token, receiver.url, private=marked_private)
    start_worker()
    bus = Bus(redis)
    public = bus.publish("ops.db", "for everyone")
    private = bus.publish("ops.db", "for bob only", user="bob")
    marker = bus.publish("ops.db", "marker")
    # Each endpoint gets its notifications in order: once the marker is in, the rest came.
    # With several shards (STREAM_SHARDS), in each shard's order: bob's private ones are
    # in bob's shard, so a marker there too (and between shards, in the same millisecond,
    # there is no order to keep).
    markers = {marker, bus.publish(f"{topic_in(configured().of_user('bob'))}.db", "marker")}
    wait_until(lambda: markers <= {e["id"] for e in receiver.unique()}, timeout=10,
               message="the markers")
    expected = [public, private, marker] if marked_private else [public, marker]
    got = [e["id"] for e in receiver.unique() if e["id"] not in markers - {marker}]
    assert by_shard(got) == by_shard(expected)


def topic_in(shard):
    """A topic (its first segment) whose public notifications are kept in ``shard``."""
    return next(t for t in ("ops", *(f"t{i}" for i in range(1000)))
                if configured().of_topic(t) == shard)


def by_shard(ids):
    """``ids`` shard by shard, each shard's in the order given."""
    shards = {}
    for notification_id in ids:
        shards.setdefault(configured().locate(notification_id)[0].index, []).append(notification_id)
    return shards


def test_the_address_is_checked_again_at_delivery(client, admin_token, allow_loopback, redis,
                                                  receivers, start_worker):
    """Registered while loopback was allowed; the worker does not allow it (as when DNS
    answers 127.0.0.1 after registration): nothing is sent, the error says why."""
    receiver = receivers()
    endpoint = register(client, admin_token, receiver.url)
    start_worker(WEBHOOK_ALLOW="")
    publish(redis, 1)
    wait_until(lambda: store.state(redis, endpoint["id"])["retrying"] >= 1, timeout=10,
               message="a refused attempt")
    assert receiver.requests == []
    assert "loopback address" in store.state(redis, endpoint["id"])["last_error"]


def test_an_endpoint_gets_only_what_was_published_after_it(client, admin_token, allow_loopback,
                                                           redis, receivers, start_worker):
    receiver = receivers()
    publish(redis, 3, topic="ops.old")
    endpoint = register(client, admin_token, receiver.url)
    new = publish(redis, 2, topic="ops.new")
    start_worker()
    wait_until(lambda: len(receiver.requests) == 2, timeout=10, message="the new ones")
    assert [e["id"] for e in receiver.unique()] == new
    assert client.delete(f"/api/webhooks/{endpoint['id']}",
                         headers={"Authorization": f"Bearer {admin_token}"}).status_code == 204
    assert redis.exists(*store.all_keys(endpoint["id"])) == 0


def test_metrics(client, admin_token, allow_loopback, redis, receivers, start_worker):
    good, bad = receivers(), receivers(status=500)
    register(client, admin_token, good.url)
    failing = register(client, admin_token, bad.url)
    start_worker()
    publish(redis, 3)
    wait_until(lambda: len(good.requests) == 3 and len(bad.requests) >= 2, timeout=10,
               message="deliveries and failures")

    def failures(text):
        lines = [line for line in text.splitlines() if line.startswith("herald_webhook_failures_total")]
        return float(lines[0].split()[-1]) if lines else 0
    # Counted once each answer is back at the worker, after the receiver saw the request.
    text = wait_for(lambda: client.get("/metrics").get_data(as_text=True),
                    lambda t: 'herald_webhook_deliveries_total{outcome="delivered"} 3.0' in t
                    and failures(t) >= 2, message="three delivered and two failures counted")
    assert f'herald_webhook_queue_depth{{endpoint="{failing["id"]}"}} 3.0' in text
    age = [line for line in text.splitlines()
           if line.startswith(f'herald_webhook_oldest_pending_seconds{{endpoint="{failing["id"]}"}}')]
    assert float(age[0].split()[-1]) > 0
    assert f'herald_webhook_parked{{endpoint="{failing["id"]}"}} 0.0' in text
    wait_until(lambda: float(redis.hget("herald:metrics:workers", "webhook_heartbeat") or 0) > 0,
               message="the heartbeat")


def test_5xx_is_retried_until_the_retry_period_ends_then_parked(
        client, admin_token, allow_loopback, redis, receivers, start_worker):
    """WEBHOOK_RETRY_FOR (24 h by default) shortened to 2 s."""
    receiver = receivers(status=503)
    endpoint = register(client, admin_token, receiver.url)
    start_worker(WEBHOOK_RETRY_FOR="2")
    [only] = publish(redis, 1)
    wait_until(lambda: store.state(redis, endpoint["id"])["parked"] == 1, timeout=15,
               message="parked at the end of the retry period")
    [parked] = store.parked(redis, endpoint["id"])
    assert (parked["notification"], parked["error"], parked["status"]) == (only, "HTTP 503", 503)
    assert parked["attempts"] == len(receiver.requests) >= 3
    assert {d for d, _ in receiver.deliveries()} == {f"{endpoint['id']}.{only}"}


def test_the_retry_state_survives_a_restart(client, admin_token, allow_loopback, redis,
                                            receivers, start_worker):
    receiver = receivers(status=500)
    endpoint = register(client, admin_token, receiver.url)
    worker = start_worker()
    publish(redis, 2)
    wait_until(lambda: store.state(redis, endpoint["id"])["retrying"] >= 3, timeout=10,
               message="three failed attempts")
    worker.stop()
    before = len(receiver.requests)
    assert store.state(redis, endpoint["id"])["retrying"] == before  # every attempt was the head's
    receiver.hang_on = before + 2  # holds the second attempt after the restart, so we can look
    start_worker()
    wait_until(lambda: len(receiver.requests) == before + 2, timeout=10,
               message="two attempts after the restart")
    # The first attempt after the restart was counted on from before, not from 1.
    assert store.state(redis, endpoint["id"])["retrying"] == before + 1
    receiver.released.set()
    receiver.status = 200
    wait_until(lambda: store.state(redis, endpoint["id"])["delivered"] == 2, timeout=10,
               message="both delivered once the receiver recovers")


def test_after_a_long_outage_the_backlog_is_parked_without_one_attempt_each(
        client, admin_token, allow_loopback, redis, receivers, start_worker):
    """The first POST hangs past WEBHOOK_TIMEOUT (2 s), beyond the retry period (1 s):
    parked; the four behind it waited out their period too: parked, not tried."""
    receiver = receivers(hang_on=1)
    endpoint = register(client, admin_token, receiver.url)
    start_worker(WEBHOOK_RETRY_FOR="1", WEBHOOK_TIMEOUT="2")
    ids = publish(redis, 5)
    wait_until(lambda: store.state(redis, endpoint["id"])["parked"] == 5, timeout=15,
               message="all five parked")
    parked = store.parked(redis, endpoint["id"])
    assert [(p["notification"], p["attempts"]) for p in parked] == \
        [(ids[0], 1)] + [(i, 0) for i in ids[1:]]
    assert parked[0]["error"].startswith("timed out: the attempt may take 2 s (WEBHOOK_TIMEOUT)")
    assert parked[1]["error"] == "not tried: its retry period ended while the endpoint failed"
    assert len(receiver.requests) == 1
    state = store.state(redis, endpoint["id"])
    assert (state["failures"], state["last_error"]) == (1, parked[0]["error"])

    receiver.released.set()
    client.post(f"/api/webhooks/{endpoint['id']}/retry",
                headers={"Authorization": f"Bearer {admin_token}"})
    wait_until(lambda: store.state(redis, endpoint["id"])["delivered"] == 5, timeout=15,
               message="all five delivered once retried")
    assert [e["id"] for e in receiver.unique()] == ids
