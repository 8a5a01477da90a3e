"""Two digest worker processes on one Redis and a real SMTP server: one is SIGKILLed
holding entries it read but never collected, before the window is due; the other takes
them over, and every notification is in exactly one email.

Each notification has a topic of its own (``ops.n<i>``), so the emails' "by topic"
sections account for every one of them (the list of items stops at ten). Windows are
every minute on the real clock: the test starts early in a minute, so the kill comes
before the window falls due, and then waits for the minute to end.
"""
import re
import time
from collections import Counter

import pytest

from app.digests import store
from app.digests.collect import GROUP
from app.stream.publish import Bus
from app.stream.shards import configured
from app.users import accounts
from tests.integration.workers.processes import WorkerProcesses, beats
from tests.support import wait_until

TOPIC_LINE = re.compile(r"^  (ops\.n\d+): (.+)$", re.M)


def topics_in(message):
    """``{topic: count}`` from a digest's plain-text "by topic and severity" section."""
    text = message.get_body(("plain",)).get_content()
    return {topic: sum(int(part.split()[1]) for part in counts.split(", "))
            for topic, counts in TOPIC_LINE.findall(text)}


def early_in_a_minute(latest=25):
    """Wait, if need be, for a minute to begin: what follows takes well under 30 s."""
    second = time.time() % 60
    if second > latest:
        time.sleep(60 - second + 0.2)


def collected_by(redis, consumer):
    for beat in beats(redis, "digest").values():
        if beat["details"]["consumer"] == consumer:
            return beat["details"]["collected"]
    return 0


@pytest.mark.timeout(240)
def test_a_worker_killed_mid_window_loses_nothing_and_doubles_nothing(redis_server, redis,
                                                                      smtp_server, tmp_path):
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    store.create(redis, "ada", {"email": "ada@example.com", "topics": ["ops"],
                                "schedule": "* * * * *"})
    bus = Bus(redis)
    stream = configured().of_topic("ops").stream  # herald:stream with one shard
    published = []

    def publish(count):
        for _ in range(count):
            published.append(bus.publish(f"ops.n{len(published)}", "numbered"))
            time.sleep(0.01)

    early_in_a_minute()
    due = (time.time() // 60 + 1) * 60  # when this minute's window falls due
    env = {"SMTP_URL": smtp_server.url, "DIGEST_CLAIM_IDLE": "1"}
    with WorkerProcesses(redis_server.url, tmp_path) as start:
        doomed = start("workers.digest", DIGEST_CONSUMER="digest-doomed", **env)
        survivor = start("workers.digest", DIGEST_CONSUMER="digest-survivor", **env)
        # Both at work: publish until each has collected some (Redis shares them out).
        wait_until(lambda: publish(5) or (collected_by(redis, "digest-doomed")
                                          and collected_by(redis, "digest-survivor")),
                   timeout=20, interval=0.2, message="both workers collecting")
        # The doomed one stops dead right after reading a batch it never collects: it is
        # paused, the batch is read under its name (as its XREADGROUP would have), and it
        # is SIGKILLed. Its pending entries are what a real crash there leaves behind.
        # The survivor is paused meanwhile too, and both reads they had waiting in Redis
        # must have ended (500 ms): Redis hands a new entry to a waiting read at once, so
        # the batch would otherwise go to whichever worker was waiting, not to this read.
        doomed.pause()
        survivor.pause()
        wait_until(lambda: not any("b" in client["flags"] for client in redis.client_list()),
                   timeout=10, message="no worker's read still waiting in Redis")
        held = []

        def doomed_holds_entries():
            publish(3)
            replies = redis.xreadgroup(GROUP, "digest-doomed", {stream: ">"}, count=100)
            held.extend(replies[0][1] if replies else [])
            return held
        wait_until(doomed_holds_entries, timeout=10, message="entries held by the doomed worker")
        doomed.kill()
        survivor.resume()
        assert time.time() < due, "the test was too slow to kill the worker mid-window"
        publish(10)  # while the survivor works alone
        wait_until(lambda: redis.xpending(stream, GROUP)["pending"] == 0, timeout=30,
                   message="the survivor to take over and collect what the doomed one held")
        assert "took over" in survivor.output()
        if time.time() < due - 1:
            assert smtp_server.messages == []  # nothing is due yet: all of it was mid-window
        wait_until(lambda: sum(sum(topics_in(m).values()) for m in smtp_server.messages)
                   >= len(published), timeout=100, interval=0.5,
                   message="the digest emails once the window fell due")
        survivor_output = survivor.output()
    counts = Counter()
    for message in smtp_server.messages:
        counts.update(topics_in(message))
    expected = {f"ops.n{i}" for i in range(len(published))}
    assert set(counts) == expected
    assert set(counts.values()) == {1}, {t: n for t, n in counts.items() if n != 1}
    totals = [int(re.search(r"(\d+) notification", m["Subject"]).group(1))
              for m in smtp_server.messages]
    assert sum(totals) == len(published)
    assert len({m["Message-ID"] for m in smtp_server.messages}) == len(smtp_server.messages)
    assert held and "Traceback" not in survivor_output
