"""Small helpers for the feed API tests: bearer headers, reads that must succeed,
and a seeded history with a reference model of who may see what."""
import random

from app.stream.envelope import SEVERITIES, topic_matches
from app.stream.publish import Bus
from app.users import subscriptions
from tests.helpers.keys import host_token
from tests.support import issue_token


def bearer(name):
    """Herald's own token for ``name``."""
    return {"Authorization": f"Bearer {issue_token(name)}"}


def jwt_bearer(name, topics=None):
    """A host-app JWT for ``name`` (the app must have JWT_SECRET = tests.helpers.keys.SECRET)."""
    claims = {"topics": topics} if topics is not None else {}
    return {"Authorization": f"Bearer {host_token(name, **claims)}"}


def read(client, headers, **params):
    """GET /api/notifications, which must answer 200; the whole reply."""
    reply = client.get("/api/notifications", headers=headers, query_string=params)
    assert reply.status_code == 200, reply.get_data(as_text=True)
    return reply.get_json()


def ids(client, headers, **params):
    return [n["id"] for n in read(client, headers, **params)["notifications"]]


def walk_back(client, headers, limit, **params):
    """Every id of the feed, newest page first, by following ``next_before``; returns
    (ids in id order, pages read)."""
    pages, before = [], None
    while True:
        query = dict(params, limit=limit)
        if before:
            query["before"] = before
        body = read(client, headers, **query)
        pages.append([n["id"] for n in body["notifications"]])
        assert len(pages[-1]) <= limit
        before = body["next_before"]
        if before is None:
            break
        assert len(pages) < 10_000, "next_before never ends"
    return [i for page in reversed(pages) for i in page], len(pages)


WORDS = ("backup", "deploy", "Disk", "quota", "latency", "Rollup", "cache", "login")
TOPICS = ("ops.backup", "ops.deploy", "ops", "spark.job.done", "spark.job.failed",
          "billing.invoice", "sparkle.noise", "news")


def seed(redis, count=400, users=("bob", "eve"), rng_seed=7):
    """Publish ``count`` varied notifications (some private to each of ``users``);
    returns the list of envelopes as published, with their ids, in id order."""
    rng = random.Random(rng_seed)
    bus = Bus(redis)
    published = []
    for index in range(count):
        fields = {"severity": rng.choice(SEVERITIES)}
        words = rng.sample(WORDS, 2)
        title = f"{words[0]} {index}"
        if rng.random() < 0.5:
            fields["body"] = f"about {words[1]} and more"
        roll = rng.random()
        if roll < 0.15:
            fields["user"] = users[0]
        elif roll < 0.30:
            fields["user"] = users[1]
        topic = rng.choice(TOPICS)
        entry_id = bus.publish(topic, title, **fields)
        published.append(dict(fields, id=entry_id, topic=topic, title=title))
    return published


def visible(published, user, topics):
    """What ``user`` subscribed to ``topics`` may see, in id order (the reference)."""
    return [n for n in published
            if n.get("user") == user
            or (not n.get("user") and any(topic_matches(t, n["topic"]) for t in topics))]


def subscribe(redis, user, topics):
    subscriptions.add(redis, user, list(topics), limit=100)
