"""A web process's lanes over a sharded history (STREAM_SHARDS > 1: app/stream/shards.py).

With one shard a web process has one LiveFollower, one window of recent
notifications (recent.py) and one ReplaySeam (seam.py). With N it has a *lane* per
shard, each the same three for its shard: the follower reads the shard's channel by
sharded pub/sub (on a cluster, from the master that holds the shard) and catches up
from the shard's stream; the relay fans out what every lane delivers (relay.py).
herald:control is followed on its own (a control-only follow.LiveFollower).

:class:`ShardedSeam` holds and releases a connection in every lane at once, so that
lifecycle.py and the namespace see one seam; :class:`Followers` answers for the
lanes' followers together (where they are, as a cursor; whether all are following).

A lane follows only once a connection of this process needs its shard (its
subscriptions or its private notifications fall there: Shards.needed), so a web
process subscribes to the shards its clients need, not to all: :meth:`ShardedSeam.need`
is asked before a connection is held or goes live (Lifecycle.topics) and before it
joins the rooms of a new subscription, and waits until those lanes know where they
start. (A lane is not stopped again when its last connection goes: its subscription
costs Redis nothing while nothing is published there for this process, and a lane
stopped and started again would have to fill its window anew.)
"""
import time
from typing import NamedTuple

from app.realtime import sharded_replay
from app.realtime.recent import Recent
from app.realtime.seam import ReplaySeam
from app.redis_client import UNAVAILABLE
from app.stream import history
from app.stream.shards import stream_id

NEED_WAIT, NEED_STEP = 5.0, 0.005  # seconds: for a lane to begin (ShardedSeam.need)
IDLE_STEP = 0.05  # seconds between looks of a lane not (yet) needed
NOTE_EVERY = 5.0  # seconds between reads of the newest id of a shard not followed


class Lane(NamedTuple):
    shard: object     # app.stream.shards.Shard
    follower: object  # app.stream.follow.LiveFollower of the shard
    recent: Recent
    seam: ReplaySeam


def build(shards, max_entries, make_follower):
    """A lane per shard; ``make_follower(shard, recent)`` makes each lane's follower
    (one that fills ``recent`` where it starts: services.live_follower)."""
    lanes = []
    for shard in shards:
        recent = Recent(max_entries, shard=shard)
        follower = make_follower(shard, recent)
        lanes.append(Lane(shard, follower, recent, ReplaySeam(follower, recent)))
    return lanes


class Followers:
    """The lanes' followers, answering as one LiveFollower does where a caller asks one
    (the seam's ``follower``, the Redis watch, the probes and figures)."""

    def __init__(self, shards, lanes, control):
        self.shards, self.lanes, self.control = shards, lanes, control
        self.client = lanes[0].follower.client
        self.wanted = set()  # the indexes of the lanes that follow (ShardedSeam.need)
        self.noted = {}  # index -> the newest id of a shard not followed, as last read

    def where(self, index):
        """Where lane ``index`` is: its follower's position; for a lane not following,
        its shard's newest id as last looked at (run_lane), which no connection of this
        process needs (so there is nothing there it should have had): a position a
        little behind is safe, one of the start ("0-0") would replay all of the shard
        to a connection that comes to need it before anything there reached it."""
        return self.lanes[index].follower.position or self.noted.get(index)

    @property
    def position(self):
        """Where the lanes are, as a cursor: every notification past it reaches a
        connection that goes live now."""
        return self.shards.format([stream_id(self.where(k) or "0-0")
                                   for k in range(len(self.lanes))])

    @property
    def connected(self):
        """Every lane that follows is subscribed (none following: nothing to follow)."""
        return all(lane.follower.connected for lane in self.lanes
                   if lane.shard.index in self.wanted)

    @property
    def reconnects(self):
        return sum(lane.follower.reconnects for lane in self.lanes)


class ShardedSeam:
    """Every lane's ReplaySeam, held, changed and released together (see the module)."""

    def __init__(self, shards, lanes, followers):
        self.shards, self.lanes, self.follower = shards, lanes, followers

    def need(self, user, topics, wait=NEED_WAIT):
        """The lanes of the shards a connection of ``user`` following ``topics`` needs
        follow from now on; returns once each knows where it starts (at most ``wait``
        seconds: without Redis it cannot, and a replay then waits for it as for a
        process just started)."""
        needed = self.shards.needed(user, topics)
        wanted = self.follower.wanted
        if not needed <= wanted:
            wanted.update(needed)
        deadline = time.monotonic() + wait
        while any(self.lanes[k].follower.position is None for k in needed) \
                and time.monotonic() < deadline:
            time.sleep(NEED_STEP)
    def hold(self, sid, user, topics, limit=None):
        for lane in self.lanes:
            lane.seam.hold(sid, user, topics, limit)

    def update_held(self, user, added, removed, full=None):
        for lane in self.lanes:
            lane.seam.update_held(user, added, removed, full)

    def forget_hold(self, sid):
        for lane in self.lanes:
            lane.seam.forget_hold(sid)

    def forget(self, sid):
        for lane in self.lanes:
            lane.seam.forget(sid)

    def stream_info(self, client):
        """Each shard's stream state, as a replay takes it (``info``)."""
        return sharded_replay.stream_infos(client, self.lanes)

    def steps(self, client, key, user, topics, last_id, go_live, gone, **options):
        return sharded_replay.steps(client, self, key, user, topics, last_id, go_live, gone,
                                    **options)


def run_lane(lane, followers, running, handlers):
    """A lane's task: its follower follows (LiveFollower.run with ``handlers``) once its
    shard is wanted (``followers.wanted``), while ``running()``; until then, every
    NOTE_EVERY seconds, its shard's newest id is noted (``followers.noted``)."""
    index, looked = lane.shard.index, 0.0
    while running():
        if index in followers.wanted:
            lane.follower.run(running, *handlers)
            return
        if time.monotonic() - looked >= NOTE_EVERY:
            looked = time.monotonic()
            try:
                followers.noted[index] = history.newest_id(lane.follower.client, lane.shard)
            except UNAVAILABLE:
                pass  # looked at again later; the lane begins as it would anyway
        time.sleep(IDLE_STEP)
