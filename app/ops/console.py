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
from app.stream.keys import STREAM
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


def group_queue(client, group, now):
    """A consumer group on the history: pending entries, lag, oldest pending's age.

    A group lives in the stream's key, so with no stream (none yet, or deleted, even
    between this call's XINFO GROUPS and its XPENDING: NOGROUP) it is absent."""
    try:
        groups = {g["name"].decode() if isinstance(g["name"], bytes) else g["name"]: g
                  for g in client.xinfo_groups(STREAM)}
    except redis.ResponseError:  # no history yet ("no such key")
        return dict(ABSENT_GROUP)
    info = groups.get(group)
    if info is None:
        return dict(ABSENT_GROUP)
    try:
        summary = client.xpending(STREAM, group)
    except redis.ResponseError as exc:
        if not stream_groups.missing(exc):
            raise
        return dict(ABSENT_GROUP)  # deleted since XINFO, the group with it
    return {"exists": True, "pending": info.get("pending", 0), "lag": info.get("lag"),
            "consumers": info.get("consumers", 0),
            "oldest_pending_seconds": _age(summary.get("min"), now) if summary.get("pending") else None}


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


def archiver(beats, client, now):
    """The archiving leader's position and lag behind the newest notification."""
    last = client.xrevrange(STREAM, count=1)
    newest = last[0][0].decode() if last else None
    leaders = [b for b in beats if b["role"] == "archiver" and b["alive"]
               and b["details"].get("leader", True)]
    if not leaders:
        return {"leader": None, "position": None, "lag_seconds": None, "newest": newest}
    leader = leaders[0]
    position = leader["details"].get("position")
    lag = 0.0
    if newest and position and id_key(newest) > id_key(position):
        lag = round((id_key(newest)[0] - id_key(position)[0]) / 1000, 3)
    elif newest and not position:
        lag = _age(newest, now)
    return {"leader": leader["instance"], "position": position, "lag_seconds": lag, "newest": newest}


def spark_runs(client):
    """The last Spark job outcomes among the newest SPARK_SCAN notifications."""
    runs = []
    for entry_id, fields in client.xrevrange(STREAM, count=SPARK_SCAN):
        if fields.get(b"topic") in SPARK_DONE:
            envelope = orjson.loads(fields[b"envelope"])
            runs.append({"id": entry_id.decode(), "topic": envelope["topic"],
                         "title": envelope["title"], "correlation_id": envelope.get("correlation_id"),
                         "at": id_key(entry_id.decode())[0] / 1000})
            if len(runs) == SPARK_RUNS:
                break
    return runs


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
