"""A web process's lanes over a sharded history (STREAM_SHARDS > 1: app/stream/shards.py).

With one shard a web process has one LiveFollower, one window of recent
notifications (recent.py) and one ReplaySeam (seam.py). With N it has a *lane* per
shard, each the same three for its shard: the follower reads the shard's channel by
sharded pub/sub (on a cluster, from the master that holds the shard) and catches up
from the shard's stream; the relay fans out what every lane delivers (relay.py).
herald:control is followed on its own (follow.ControlFollower).

:class:`ShardedSeam` holds and releases a connection in every lane at once, so that
lifecycle.py and the namespace see one seam; :class:`Followers` answers for the
lanes' followers together (where they are, as a cursor; whether all are following).
"""
from typing import NamedTuple

from app.realtime import sharded_replay
from app.realtime.recent import Recent
from app.realtime.seam import ReplaySeam
from app.stream.shards import stream_id


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

    @property
    def position(self):
        """Where the lanes are, as a cursor: every notification past it reaches a
        connection that goes live now."""
        return self.shards.format([stream_id(lane.follower.position or "0-0")
                                   for lane in self.lanes])

    @property
    def connected(self):
        return all(lane.follower.connected for lane in self.lanes)

    @property
    def reconnects(self):
        return sum(lane.follower.reconnects for lane in self.lanes)


class ShardedSeam:
    """Every lane's ReplaySeam, held, changed and released together (see the module)."""

    def __init__(self, shards, lanes, followers):
        self.shards, self.lanes, self.follower = shards, lanes, followers

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
