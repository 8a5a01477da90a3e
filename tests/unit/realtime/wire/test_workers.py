"""Workers (app/realtime/wire/workers.py): a task runs as in a greenlet of its own, in a
greenlet kept for the next one: the same order as gevent.spawn's, a fresh context each,
its errors logged, join and kill as a greenlet's, at most ``idle_most`` kept waiting."""
import contextvars
import logging
import threading

import gevent
import gevent.event
import pytest
from greenlet import getcurrent

from app.realtime.wire.workers import Workers

VALUE = contextvars.ContextVar("value", default="unset")


@pytest.fixture
def workers():
    return Workers(idle_most=4)


def test_one_task_after_another_reuses_one_worker(workers):
    ran = []
    for i in range(50):
        workers.spawn(ran.append, i).join(timeout=5)
    assert ran == list(range(50))
    assert workers.started == 1
    assert len(workers.idle) == 1


def test_tasks_start_in_the_order_given_interleaved_with_plain_greenlets(workers):
    order = []
    for i in range(6):  # some reuse a worker, some start one: the order holds either way
        workers.spawn(order.append, f"w{i}")
        gevent.spawn(order.append, f"g{i}")
        if i == 2:
            gevent.sleep(0)
    gevent.sleep(0)
    assert order == [f"{kind}{i}" for i in range(6) for kind in "wg"]


def test_each_task_runs_in_a_fresh_context_as_a_new_greenlet_would(workers):
    VALUE.set("the spawner's")
    seen = []

    def task(mine):
        seen.append(VALUE.get())
        VALUE.set(mine)
    for name in ("first", "second", "third"):
        workers.spawn(task, name).join(timeout=5)
    assert seen == ["unset"] * 3  # neither the spawner's nor the previous task's
    assert gevent.spawn(VALUE.get).get(timeout=5) == "unset"  # what gevent.spawn does
    assert workers.started == 1


def test_a_failing_task_is_logged_and_its_worker_goes_on(workers, caplog):
    ran = []

    def fails():
        raise ValueError("the bad input")
    with caplog.at_level(logging.ERROR, logger="app.realtime.wire.workers"):
        failed = workers.spawn(fails)
        assert failed.join(timeout=5) is True and failed.dead
        workers.spawn(ran.append, "after").join(timeout=5)
    assert ran == ["after"] and workers.started == 1
    [record] = caplog.records
    assert "fails" in record.getMessage() and "the bad input" in record.exc_text


def test_join_waits_for_the_end_and_its_timeout_bounds_the_wait(workers):
    release = gevent.event.Event()
    task = workers.spawn(release.wait)
    assert task.join(timeout=0.05) is False and not task.dead
    gevent.spawn(release.set)
    assert task.join(timeout=5) is True and task.dead
    assert task.join() is True  # again, at once


def test_at_most_idle_most_workers_are_kept_waiting(workers):
    release = gevent.event.Event()
    tasks = [workers.spawn(release.wait) for _ in range(10)]
    gevent.sleep(0)
    assert workers.started == 10 and workers.idle == []
    release.set()
    for task in tasks:
        assert task.join(timeout=5)
    gevent.sleep(0)
    assert len(workers.idle) == 4
    again = [workers.spawn(gevent.sleep, 0) for _ in range(4)]
    for task in again:
        assert task.join(timeout=5)
    assert workers.started == 10  # the four kept ran them


def test_a_timeout_a_task_left_running_fires_into_its_idle_worker_which_goes_on(workers, caplog):
    def leaks():
        gevent.Timeout(0.01).start()  # never cancelled
    with caplog.at_level(logging.WARNING, logger="app.realtime.wire.workers"):
        workers.spawn(leaks).join(timeout=5)
        waited = gevent.event.Event()
        gevent.spawn_later(0.2, waited.set)
        waited.wait(5)  # the timeout has fired meanwhile, into the waiting worker
    assert any("timeout" in r.getMessage() for r in caplog.records)
    ran = []
    workers.spawn(ran.append, "next").join(timeout=5)
    assert ran == ["next"] and workers.started == 1


def test_kill_before_the_start_means_it_never_runs_and_while_running_ends_it(workers):
    ran = []
    never = workers.spawn(ran.append, "never")
    never.kill()
    assert never.join(timeout=5) and ran == []

    stuck = workers.spawn(gevent.sleep, 30)
    gevent.sleep(0)
    stuck.kill()
    assert stuck.dead
    workers.spawn(ran.append, "after").join(timeout=5)
    assert ran == ["after"]


def test_a_task_given_from_another_threads_hub_runs_in_that_hub(workers):
    workers.spawn(gevent.sleep, 0).join(timeout=5)  # bound to this thread's hub
    ran = []

    def other_thread():
        task = workers.spawn(lambda: ran.append(gevent.get_hub()))
        task.join(timeout=5)
        ran.append(gevent.get_hub())
    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join(timeout=10)
    assert len(ran) == 2 and ran[0] is ran[1] is not gevent.get_hub()
    assert workers.started == 1 and getcurrent() is not None
