"""A replay's steps and the other greenlets' turns (socket_replay.py, ``_replay``).

A reconnect's CONNECT reply, a short replay's page and ``replayed`` used to
leave in three writes: the stream's state was read after the reply had gone
out, and the replay let others run after every step, so the connection's
queue was written between them. Now the state is read ahead (before the
reply goes out) and a replay lets others run only once its steps took longer
than YIELD_AFTER: what a short replay sends waits in the queue together and
leaves in one write (queues.py, DrainingQueue). The server here records what
the namespace does instead of writing it.

Reading ahead waits for Redis inside the connect handler, as the token's user and
the subscriptions did already: a connection that closes meanwhile is refused there
and leaves nothing behind (the last two tests).
"""
import pytest

from app import services
from app.realtime import namespace as namespace_module
from app.realtime import rooms, socket_replay
from app.realtime.namespace import NotificationsNamespace
from app.realtime.presence import Presence
from app.realtime.recent import Recent
from app.realtime.seam import ReplaySeam
from app.realtime.server import HeraldServer
from app.redis_client import is_cluster
from app.stream import state
from app.stream.publish import Bus


@pytest.fixture
def replaying(redis_server, redis, monkeypatch):
    """``(namespace, steps, cursor, sid)``: a connection of ann's held from ``cursor``
    with three notifications since, in the relay's window; ``steps`` records
    the pages, events and turns given up, in order. Its replays count as short
    however long this machine takes over a step (YIELD_AFTER a minute): a busy CI
    machine once took longer than the real millisecond between the page and
    ``replayed``, and the replay rightly let the others run there."""
    monkeypatch.setattr(socket_replay, "YIELD_AFTER", 60.0)
    recent = Recent()
    follower = services.live_follower(redis, redis_server.url, recent)
    seam = ReplaySeam(follower, recent)
    sio = HeraldServer(async_mode="threading")
    namespace = NotificationsNamespace(redis, verifier=None, max_subscriptions=10,
                                       presence=Presence(redis, "test:1"), seam=seam)
    sio.register_namespace(namespace)
    bus = Bus(redis)
    cursor = bus.publish("news.a", "seen")
    newest = [bus.publish("news.a", f"missed {i}") for i in range(3)][-1]
    follower.on_start(newest)  # the window holds the stream up to its newest
    follower.advance(newest)
    steps = []
    sio.send_page = lambda ns, sid, texts: steps.append(("page", len(texts)))
    sio.emit = lambda event, data=None, to=None, **kwargs: steps.append((event, data["count"]))
    sio.sleep = lambda seconds=0: steps.append(("others run",))
    sid = sio.manager.pre_connect("eio-1", rooms.NAMESPACE)
    sio.manager.connect(sid, rooms.NAMESPACE)  # its CONNECT reply went out
    namespace.users[sid] = "ann"
    seam.hold(sid, "ann", ["news"])
    return namespace, steps, cursor, sid


def test_a_short_replay_sends_its_steps_together(replaying):
    namespace, steps, cursor, sid = replaying
    namespace._replay(sid, "ann", ["news"], cursor, info=namespace._info_ahead())
    assert steps == [("page", 3), ("replayed", 3)]


def test_the_stream_state_asked_with_a_connects_reads_is_read_even_before_redis_knows_the_script(
        replaying, redis):
    namespace, steps, cursor, sid = replaying
    redis.script_flush()  # (a Redis restarted: the script is loaded by the read alone)
    info = namespace._info_ahead(namespace.lifecycle.ask_stream_info())
    assert info == state.stream_info(redis) and info["last-generated-id"] > cursor
    namespace._replay(sid, "ann", ["news"], cursor, info=info)
    assert steps == [("page", 3), ("replayed", 3)]


def test_a_replay_past_its_time_lets_the_others_run_between_steps(replaying, monkeypatch):
    namespace, steps, cursor, sid = replaying
    monkeypatch.setattr(socket_replay, "YIELD_AFTER", -1.0)
    namespace._replay(sid, "ann", ["news"], cursor)  # the stream's state read by the replay
    assert steps == [("page", 3), ("others run",), ("replayed", 3)]


def test_a_connect_whose_connection_closes_while_it_reads_ahead_keeps_nothing(redis_server, redis, user):
    """Reading ahead waits for Redis inside the connect handler, after the connection
    is held. A connection that closes meanwhile never hears ``on_disconnect`` (python-
    socketio has not answered its connect yet), so the connect refuses it then and
    gives back all it took: else its user stayed online, and its hold kept filling."""
    from app import create_app
    from app.services import of as of_app
    from app.settings import TestConfig
    from tests.support import issue_token

    app = create_app(TestConfig(redis_server.url))
    services = of_app(app)
    namespace, sio = services.namespace, services.namespace.server
    cursor = Bus(redis).publish("news.a", "seen")
    sid = sio.manager.pre_connect("eio-gone", rooms.NAMESPACE)  # no Engine.IO socket: closed
    with pytest.raises(namespace_module.Refused, match="closed while it connected"):
        namespace.on_connect(sid, {"REMOTE_ADDR": "127.0.0.1"},
                             {"token": issue_token(user[0]), "last_id": cursor})
    assert namespace.users == {} and namespace.turns == {}
    assert namespace.presence.local == {}
    assert sid not in services.seam.held
    assert services.bounds.sessions.open == {}


def test_a_resuming_connect_reads_its_user_subscriptions_and_stream_state_in_one_round_trip(
        redis_server, redis, user):
    """The token's user, its subscriptions and the stream's state, asked of the
    connect's batched reads (batched_reads.py) before it waits for any: with gevent
    they are one pipeline (test_batched_reads.py), where the stream's state was a
    round trip of its own after the others (a shared read, not in ``reads``). All of
    a connect's reads are made before it is answered, so a connect refused then has
    made them all. (This app runs threads, which may send each ask by itself.)"""
    from app import create_app
    from app.services import of as of_app
    from app.settings import TestConfig
    from tests.support import issue_token

    namespace = of_app(create_app(TestConfig(redis_server.url))).namespace
    cursor = Bus(redis).publish("news.a", "seen")
    sid = namespace.server.manager.pre_connect("eio-gone", rooms.NAMESPACE)
    asked, reads = [], namespace.connect_reads
    ask, shared = reads.ask, reads.shared
    reads.ask = lambda command, *args, **kwargs: (asked.append(command), ask(command, *args, **kwargs))[1]
    reads.shared = lambda name, read: (asked.append(f"shared {name}"), shared(name, read))[1]
    with pytest.raises(namespace_module.Refused, match="closed while it connected"):
        namespace.on_connect(sid, {"REMOTE_ADDR": "127.0.0.1"},
                             {"token": issue_token(user[0]), "last_id": cursor})
    # (A Redis Cluster's pipelines refuse scripts: the state is read by itself there.)
    alone = is_cluster(redis)
    assert sorted(asked) == sorted(["hmget", "smembers", "shared stream_info" if alone else "evalsha"])


def test_a_connect_without_a_cursor_whose_connection_closed_meanwhile_keeps_nothing(
        redis_server, redis, user):
    """The same for a connect that goes live at once: it too waited for Redis (the
    token's user and the subscriptions), and its user stayed online for good when the
    connection closed meanwhile."""
    from app import create_app
    from app.services import of as of_app
    from app.settings import TestConfig
    from tests.support import issue_token

    services = of_app(create_app(TestConfig(redis_server.url)))
    namespace = services.namespace
    sid = namespace.server.manager.pre_connect("eio-gone", rooms.NAMESPACE)
    with pytest.raises(namespace_module.Refused, match="closed while it connected"):
        namespace.on_connect(sid, {"REMOTE_ADDR": "127.0.0.1"}, {"token": issue_token(user[0])})
    assert namespace.users == {} and namespace.presence.local == {}
    assert services.bounds.sessions.open == {}
