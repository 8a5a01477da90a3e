"""RedisWatch: its verdict from a PING (bounded wait) and the follower, and one
broadcast per change of it. The Socket.IO server is a recorder of emits (the
end-to-end tests drive the real one); Redis is the real one, or for a PING that
never comes back, a client whose PING waits until the test lets it go."""
import threading

from app.realtime.redis_watch import RedisWatch
from app.realtime.rooms import NAMESPACE
from app.redis_client import connect
from tests.support import free_port, wait_until


class RecordingServer:
    class eio:  # noqa: N801 (as the real server's attribute is named)
        create_event = threading.Event

    def __init__(self):
        self.emits = []
        self.tasks = []

    def start_background_task(self, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        self.tasks.append(thread)
        thread.start()
        return thread

    def emit(self, event, data, namespace=None, to=None):
        self.emits.append((event, data, namespace, to))


class Follower:
    def __init__(self, client, connected=True, reconnects=0):
        self.client, self.connected, self.reconnects = client, connected, reconnects


class HangingClient:
    """A PING that gets no answer until ``release`` is set."""

    def __init__(self):
        self.pings = 0
        self.release = threading.Event()

    def ping(self):
        self.pings += 1
        self.release.wait(10)
        return True


def test_each_change_of_verdict_is_broadcast_once_to_the_namespace(redis):
    sio = RecordingServer()
    watch = RedisWatch(sio, Follower(redis))
    assert watch.payload()["redis"] == "up"
    watch.judge(True)
    assert sio.emits == []
    watch.judge(False)
    watch.judge(False)
    down = watch.payload()
    assert down["redis"] == "down" and isinstance(down["since"], int)
    watch.judge(True)
    up = watch.payload()
    assert sio.emits == [("status", down, NAMESPACE, None), ("status", up, NAMESPACE, None)]
    assert up["since"] >= down["since"] and watch.changes == 2


def test_a_redis_that_answers_is_up(redis):
    assert RedisWatch(RecordingServer(), Follower(redis)).probe() is True


def test_a_redis_that_refuses_connections_is_down():
    client = connect(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.5)
    watch = RedisWatch(RecordingServer(), Follower(client))
    assert watch.probe() is False
    assert watch.reason is not None


def test_a_ping_without_answer_is_down_after_the_wait_and_is_never_sent_twice():
    client = HangingClient()
    watch = RedisWatch(RecordingServer(), Follower(client), wait=0.05)
    assert watch.probe() is False
    assert watch.probe() is False
    assert client.pings == 1, "the PING still out is waited for again, not repeated"
    client.release.set()
    assert watch.probe() is True
    assert client.pings == 1


def test_a_follower_that_lost_its_subscription_is_down_until_it_has_it_again(redis):
    follower = Follower(redis, connected=False, reconnects=0)
    watch = RedisWatch(RecordingServer(), follower)
    assert watch.probe() is True, "not following yet (starting): the PING decides"
    follower.reconnects = 1
    assert watch.probe() is False
    follower.connected = True
    assert watch.probe() is True


def test_a_suspicion_brings_the_next_ping_forward(redis):
    sio = RecordingServer()
    follower = Follower(redis)
    rounds = []

    class Counted(RedisWatch):
        def judge(self, reachable):
            super().judge(reachable)
            rounds.append(reachable)

    watch = Counted(sio, follower, every=30)
    running = threading.Event()
    running.set()
    sio.start_background_task(watch.run, running.is_set)
    try:
        wait_until(lambda: rounds == [True], timeout=5, message="the first round")
        follower.connected, follower.reconnects = False, 1
        watch.suspect()  # a request met an outage: PING now, not at the 30 s tick
        # The verdict is set, logged, then emitted: wait for what the clients hear.
        wait_until(lambda: sio.emits, timeout=5, message="the verdict told")
        assert watch.down
        assert [data["redis"] for _event, data, _ns, _to in sio.emits] == ["down"]
    finally:
        running.clear()
        watch.suspect()
