"""The operations console's picture of the whole deployment, read from Redis.

One call, :func:`status`, gathers what an operator needs on one page
(``/ops``, ``GET /api/ops/status``), from what the processes already write:

- **web processes**: their metrics snapshots (app/ops/web_figures.py): connected
  clients and streams, deliveries a second and the relay's recent lag;
- **presence**: who is online (app/realtime/presence.py);
- **workers**: every heartbeat (app/ops/heartbeats.py), alive or missing, with
  what each reports (the bridge's backlog, the archiver's position), and
  the faults they report (app/ops/worker_health.py);
- **queues**: the digest consumer group (pending, lag, the oldest pending
  entry's age, the critical outbox) and the webhook queues (waiting, parked,
  the oldest's age), computed from the queues themselves, so they tell the
  truth while their worker is down;
- **the archiver**: the leader's position and how far it trails the stream;
- **Spark**: the last runs' outcomes, from the history.

Every figure is bounded in cost (no scan of the whole history).

With a sharded history (``STREAM_SHARDS=N``, app/stream/shards.py) each figure is
read shard by shard, one command per shard's stream, and added up: a consumer
group is one per shard (app/stream/groups.py), so its pending entries and lag are
the shards' sums, its oldest pending entry the oldest of any shard's, its
consumers the most any shard's has, and it exists when it does in every shard
(one missing from a shard is shown absent, with the others' figures); the newest
notification is the newest of any shard's (by time, under its notification id),
the archiver's lag the greatest of its shards'; Spark outcomes are looked for
among each shard's newest entries.
"""
import time

import orjson
import redis

from app.digests import store as digest_store
from app.digests import windows as digest_windows
from app.ops import heartbeats, web_figures, worker_health
from app.realtime import presence
from app.stream import groups as stream_groups
from app.stream.envelope import id_key
from app.stream.shards import configured as configured_shards
from app.webhooks import store as webhook_store

SPARK_SCAN = 2000   # newest history entries looked through for Spark outcomes
SPARK_RUNS = 5
SPARK_DONE = (b"spark.job.succeeded", b"spark.job.failed")


def _age(entry_id, now):
    if not entry_id:
        return None
    if isinstance(entry_id, bytes):
        entry_id = entry_id.decode()
    return round(max(0.0, now - id_key(entry_id)[0] / 1000), 3)


def web_processes(client, now):
    """Every web process's last snapshot; ``alive`` false once it is late (the process
    stopped or hangs: the snapshot itself expires SNAPSHOT_TTL seconds after)."""
    keys = sorted(client.scan_iter(web_figures.WEB_PREFIX + "*", count=500))
    out = []
    for key, raw in zip(keys, client.mget(keys) if keys else [], strict=True):
        if raw is None:
            continue
        snap = orjson.loads(raw)
        out.append({
            "process": key.decode()[len(web_figures.WEB_PREFIX):],
            "connected_clients": snap.get("connected_clients", 0),
            "sse_streams": snap.get("sse_streams", 0),
            "deliveries_per_second": snap.get("deliveries_per_second", 0.0),
            "relay_lag_p99": snap.get("relay_lag_p99"),
            "relay_lag_p99_over": bool(snap.get("relay_lag_p99_over")),
            "relay_connected": bool(snap.get("relay_connected")),
            "at": snap.get("at"),
            "alive": now - (snap.get("at") or 0) <= web_figures.SNAPSHOT_EVERY + heartbeats.GRACE,
        })
    return out


ABSENT_GROUP = {"exists": False, "pending": 0, "lag": 0, "consumers": 0,
                "oldest_pending_seconds": None}


def group_queue(client, group, now, shards=None):
    """A consumer group on the history: pending entries, lag, oldest pending's age (over
    every shard: see the module doc).

    A group lives in the stream's key, so with no stream (none yet, or deleted, even
    between this call's XINFO GROUPS and its XPENDING: NOGROUP) it is absent."""
    parts = [_group_in(client, shard, group) for shard in shards or configured_shards()]
    present = [part for part in parts if part is not None]
    if not present:
        return dict(ABSENT_GROUP)
    lags = [part["lag"] for part in present]
    ages = [_age(part["oldest"], now) for part in present if part["oldest"]]
    return {"exists": len(present) == len(parts),
            "pending": sum(part["pending"] for part in present),
            "lag": None if None in lags else sum(lags),
            "consumers": max(part["consumers"] for part in present),
            "oldest_pending_seconds": max(ages) if ages else None}


def _group_in(client, shard, group):
    """The group's figures in ``shard`` (its oldest pending entry's stream id, None when
    nothing is pending), or None when the shard has no such group."""
    try:
        groups = {g["name"].decode() if isinstance(g["name"], bytes) else g["name"]: g
                  for g in client.xinfo_groups(shard.stream)}
    except redis.ResponseError:  # no history yet ("no such key")
        return None
    info = groups.get(group)
    if info is None:
        return None
    try:
        summary = client.xpending(shard.stream, group)
    except redis.ResponseError as exc:
        if not stream_groups.missing(exc):
            raise
        return None  # deleted since XINFO, the group with it
    return {"pending": info.get("pending", 0), "lag": info.get("lag"),
            "consumers": info.get("consumers", 0),
            "oldest": summary.get("min") if summary.get("pending") else None}


def digests(client, now):
    queue = group_queue(client, digest_store.GROUP, now)
    queue["outbox"] = client.llen(digest_windows.OUTBOX)
    return queue


def webhooks(client, now):
    endpoints = webhook_store.list_all(client)
    states = [webhook_store.state(client, r["id"], now) for r in endpoints]
    ages = [s["oldest_pending_seconds"] for s in states if s["oldest_pending_seconds"] is not None]
    queue = group_queue(client, webhook_store.GROUP, now)
    queue.update(endpoints=len(endpoints), waiting=sum(s["pending"] for s in states),
                 parked=sum(s["parked"] for s in states),
                 oldest_waiting_seconds=round(max(ages), 3) if ages else None)
    return queue


def _newest(client, shard):
    """The notification id of ``shard``'s newest entry, or None when it has none."""
    last = client.xrevrange(shard.stream, count=1)
    return shard.public(last[0][0]) if last else None


def archiver(beats, client, now, shards=None):
    """The archiving leader's position and lag behind the newest notification (with
    several shards: the newest of any shard, and the greatest of the shards' lags, each
    shard's newest against the leader's position there, when its heartbeat has them)."""
    shards = shards or configured_shards()
    newests = [_newest(client, shard) for shard in shards]
    known = [n for n in newests if n]
    newest = max(known, key=id_key) if known else None
    leaders = [b for b in beats if b["role"] == "archiver" and b["alive"]
               and b["details"].get("leader", True)]
    if not leaders:
        return {"leader": None, "position": None, "lag_seconds": None, "newest": newest}
    leader = leaders[0]
    position = leader["details"].get("position")
    positions = leader["details"].get("positions")
    if len(shards) > 1 and isinstance(positions, list) and len(positions) == len(shards):
        lag = max(_lag(n, p, now) for n, p in zip(newests, positions, strict=True))
    else:
        lag = _lag(newest, position, now)
    return {"leader": leader["instance"], "position": position, "lag_seconds": lag, "newest": newest}


def _lag(newest, position, now):
    """How far ``position`` trails ``newest`` (seconds); the newest's age when nothing
    is archived."""
    if newest and position and id_key(newest) > id_key(position):
        return round((id_key(newest)[0] - id_key(position)[0]) / 1000, 3)
    if newest and not position:
        return _age(newest, now)
    return 0.0


def spark_runs(client, shards=None):
    """The last Spark job outcomes among each shard's newest SPARK_SCAN notifications,
    newest first."""
    runs = []
    for shard in shards or configured_shards():
        found = 0
        for entry_id, fields in client.xrevrange(shard.stream, count=SPARK_SCAN):
            if fields.get(b"topic") in SPARK_DONE:
                envelope = orjson.loads(fields[b"envelope"])
                runs.append({"id": shard.public(entry_id), "topic": envelope["topic"],
                             "title": envelope["title"],
                             "correlation_id": envelope.get("correlation_id"),
                             "at": id_key(entry_id)[0] / 1000})
                found += 1
                if found == SPARK_RUNS:
                    break
    runs.sort(key=lambda run: id_key(run["id"]), reverse=True)  # stable: a tie in shard order
    return runs[:SPARK_RUNS]


def status(client, required=()):
    """Everything the console shows, as JSON-able data."""
    now = time.time()
    beats = heartbeats.read(client, now)
    return {
        "at": now,
        "web": web_processes(client, now),
        "presence": presence.online(client),
        "workers": beats,
        "faults": worker_health.faults(client),
        "missing": heartbeats.missing_roles(beats, required),
        "bridge_backlog": sum(int(b["details"].get("backlog", 0)) for b in beats
                              if b["role"] == "bridge" and b["alive"]),
        "digests": digests(client, now),
        "webhooks": webhooks(client, now),
        "archiver": archiver(beats, client, now),
        "spark": spark_runs(client),
    }
