"""Two webhook workers on one Redis: one is active (the lease), the other stands by and
takes over when the active one is SIGKILLed; the receiver gets everything, in order,
duplicates only as the same delivery."""
from app.stream.publish import Bus
from app.webhooks.worker import LEASE_KEY
from tests.helpers.webhooks import register
from tests.support import wait_until


def active_pid(redis):
    holder = redis.get(LEASE_KEY)
    return int(holder.decode().split(":")[1]) if holder else None


def test_the_standby_takes_over_from_a_killed_active_worker(client, admin_token, allow_loopback,
                                                            redis, receivers, start_worker):
    receiver = receivers(delay=0.02)
    register(client, admin_token, receiver.url)
    workers = [start_worker(WEBHOOK_LEASE="3") for _ in range(2)]
    active_one = wait_until(lambda: active_pid(redis), timeout=10, message="an active worker")
    [active] = [w for w in workers if w.process.pid == active_one]
    [standby] = [w for w in workers if w is not active]
    wait_until(lambda: "standing by" in standby.output(), timeout=10, message="the other standing by")
    bus = Bus(redis)
    ids = [bus.publish("ops.db", f"n{i}") for i in range(30)]
    wait_until(lambda: len(receiver.requests) >= 10, timeout=15, message="some deliveries")
    active.kill()  # SIGKILL, deliveries under way
    ids += [bus.publish("ops.db", f"m{i}") for i in range(10)]
    wait_until(lambda: len(receiver.unique()) == len(ids), timeout=30,
               message="everything, from the worker that took over")
    assert active_pid(redis) == standby.process.pid
    assert "active: dispatching and delivering" in standby.output()
    assert [e["id"] for e in receiver.unique()] == ids  # in order, none lost
    bodies = {}
    for request in receiver.requests:  # any duplicate is the same delivery, droppable
        delivery = request["headers"]["Herald-Delivery"]
        assert bodies.setdefault(delivery, request["body"]) == request["body"]
    assert len(receiver.requests) <= len(ids) + 1  # at most the one under way, again
