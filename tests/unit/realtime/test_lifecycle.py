"""The steps every real-time connection goes through (app/realtime/lifecycle.py), on their
own: what a step takes is given back at the end, whichever way it ends."""
import threading

import pytest

from app.realtime.lifecycle import Lifecycle
from app.realtime.per_address import TooMany
from app.realtime.seam import ReplaySeam
from app.realtime.storm import Busy, ConnectBounds


class Follower:
    position, position_key = "5-0", (5, 0)


def lifecycle(per_address=1, concurrency=1, queue=0):
    bounds = ConnectBounds(0, 0, concurrency, queue, threading.Event,
                           sessions_per_address=per_address)
    return Lifecycle(bounds, ReplaySeam(Follower()), reads=None), bounds


def test_an_address_past_its_limit_is_refused_with_nothing_left_counted():
    steps, bounds = lifecycle(per_address=1)
    steps.admit("10.0.0.1", resuming=False)
    with pytest.raises(TooMany):
        steps.admit("10.0.0.1", resuming=False)
    assert bounds.sessions.open == {"10.0.0.1": 1}
    steps.leave("10.0.0.1")
    steps.leave(None)  # never counted: nothing to give back
    assert bounds.sessions.open == {}


def test_a_replay_turn_is_given_back_and_the_hold_forgotten_when_the_replay_is_over():
    steps, bounds = lifecycle(per_address=0, concurrency=1, queue=0)
    turn = steps.turn()
    assert turn.granted
    with pytest.raises(Busy):  # the one replay place is taken, and none may wait
        steps.turn()
    steps.hold("sid-1", "ann", ["news"], None)
    assert "sid-1" in steps.seam.held
    steps.replayed("sid-1", turn)
    assert "sid-1" not in steps.seam.held and bounds.turns.running == 0
    assert steps.turn().granted  # the next one's go


def test_a_connection_that_ends_while_held_leaves_nothing_in_the_seam():
    steps, _ = lifecycle(per_address=0)
    steps.hold("sse:1", "ann", ["news"], ["news"])
    steps.forget("sse:1")
    assert steps.seam.held == {}
    assert steps.position() == "5-0"


def test_without_bounds_nothing_is_counted_or_refused():
    steps = Lifecycle(None, ReplaySeam(Follower()), reads=None)
    for _ in range(3):
        steps.admit("10.0.0.1", resuming=True)
    assert steps.turn() is None
    steps.replayed("k", None)


def test_topics_asked_early_are_the_users_subscriptions_within_the_credentials_limit(redis):
    from app.realtime.batched_reads import BatchedReads
    from app.users import subscriptions
    from app.web.auth.bearer import Identity
    redis.sadd(subscriptions.key("ann"), "news", "sport", "jobs")
    steps = Lifecycle(None, ReplaySeam(Follower()), reads=BatchedReads.unbatched(redis))
    ann = Identity("ann", False, "jwt", ["news", "jobs"])
    assert steps.topics(ann, steps.ask_topics("ann")) == steps.topics(ann) == ["jobs", "news"]
    # asked for another user (never, from a connect): not taken, read for who it is
    redis.sadd(subscriptions.key("bob"), "bob-only")
    assert steps.topics(ann, steps.ask_topics("bob")) == ["jobs", "news"]
