"""One task ends every connection whose token expired (app/realtime/deadlines.py)."""
import threading
import time

from app.realtime.deadlines import Deadlines


def test_each_item_is_acted_on_once_at_its_time_in_time_order():
    done, finished = [], threading.Event()
    tasks = []

    def spawn(run):
        task = threading.Thread(target=run)
        tasks.append(task)
        task.start()

    def action(item):
        done.append((item, time.time()))
        if len(done) == 3:
            finished.set()

    deadlines = Deadlines(action, spawn, time.sleep)
    start = time.time()
    deadlines.add("late", start + 0.3)
    deadlines.add("now", start)
    deadlines.add("soon", start + 0.1)
    assert finished.wait(10)
    assert [item for item, _ in done] == ["now", "soon", "late"]
    assert all(at >= start + {"now": 0, "soon": 0.1, "late": 0.3}[item] for item, at in done)
    for task in tasks:
        task.join(5)
    assert len(tasks) == 1 and not deadlines.running and not deadlines.heap  # one task, gone


def test_a_cancelled_deadline_is_not_acted_on_nor_kept():
    """A session that ended keeps nothing here (bench/churn.py: 100,000 entries stayed,
    each until its token expired, after 100,000 churned sessions)."""
    done = []
    deadlines = Deadlines(done.append, lambda run: None, time.sleep)  # the task is not run
    later = time.time() + 3600
    for n in range(10_000):
        deadlines.add(n, later)
        deadlines.cancel(n)
    assert len(deadlines.heap) <= 64 + 1 and not deadlines.pending
    due = Deadlines(done.append, lambda run: None, time.sleep)
    due.add("open", time.time())
    due.add("closed", time.time())
    due.cancel("closed")
    due._run()
    assert done == ["open"] and not due.heap
