"""The bridge's ingest, step by step: a batch whose reply is lost is stored exactly once.

Real Redis, real ZeroMQ sockets (inproc); the fault injected is the network
losing the reply of one batch write, before or after Redis applied it.
"""
import json

import pytest
import redis as redis_lib
import zmq

from app.stream.publish import Bus
from app.stream.shards import configured as configured_shards
from workers.bridge.ingest import Ingest
from workers.bridge.settings import Settings


class LosesOneReply(Bus):
    """A Bus whose next batch write raises ConnectionError, after or before writing."""

    def __init__(self, client, after_writing):
        super().__init__(client)
        self.after_writing = after_writing
        self.armed = True

    def publish_batch(self, prepared, batch_id):
        if self.armed:
            self.armed = False
            if self.after_writing:
                super().publish_batch(prepared, batch_id)
            raise redis_lib.ConnectionError("reply lost")
        return super().publish_batch(prepared, batch_id)


@pytest.fixture
def context():
    context = zmq.Context()
    yield context
    context.destroy(linger=0)


def make_ingest(context, bus, name):
    settings = Settings(pull=f"inproc://{name}-pull", router=f"inproc://{name}-router",
                        xpub=f"inproc://{name}-xpub", confirm_timeout=30)
    ingest = Ingest(context, settings, bus, lambda socket: None)
    dealer = context.socket(zmq.DEALER)
    dealer.connect(settings.router)
    return ingest, dealer


def step(ingest):
    """One turn of the loop, without waiting for retry backoff."""
    ingest._drain(ingest.router, ingest._on_request)
    ingest.retry_at = 0.0
    ingest.flush()
    ingest._expire()


@pytest.mark.parametrize("after_writing", [True, False], ids=["written", "not-written"])
def test_lost_reply_is_resolved_without_loss_or_double(context, redis, after_writing):
    bus = LosesOneReply(redis, after_writing)
    ingest, dealer = make_ingest(context, bus, f"lost-{after_writing}")
    try:
        for i in range(3):
            dealer.send_multipart([b"", json.dumps({"topic": "t", "title": f"n{i}"}).encode()])
        for _ in range(50):  # the messages are there at once (inproc); one step should do
            step(ingest)
            if ingest.unresolved:
                break
        assert ingest.unresolved is not None and len(ingest.unresolved[1]) == 3
        assert not dealer.poll(100)  # nobody was told anything yet
        step(ingest)
        assert ingest.unresolved is None
        answers = [json.loads(dealer.recv_multipart()[-1]) for _ in range(3)]
        shard = configured_shards().of_topic("t")  # (its shard, in a sharded history)
        stored = [shard.public(entry_id) for entry_id, _ in redis.xrange(shard.stream)]
        assert len(stored) == 3
        assert [a["id"] for a in answers] == stored
    finally:
        dealer.close(0)
        ingest.close(0)


def test_a_check_that_fails_unexpectedly_costs_one_message_not_the_bridge(
        context, redis, monkeypatch, caplog):
    """Whatever a message makes the checks raise (here a bug, injected at the prepare seam),
    the peer is answered, the error is logged with its traceback, and the next is stored."""
    from workers.bridge import frames

    real = frames.prepare

    def buggy(envelope):
        if envelope.get("title") == "boom":
            raise RuntimeError("a bug in a check")
        return real(envelope)

    monkeypatch.setattr(frames, "prepare", buggy)
    ingest, dealer = make_ingest(context, Bus(redis), "internal")
    try:
        for title in ("boom", "fine"):
            dealer.send_multipart([b"", json.dumps({"topic": "t", "title": title}).encode()])
        for _ in range(50):
            step(ingest)
            if redis.xlen(configured_shards().of_topic("t").stream):
                break
        answers = [json.loads(dealer.recv_multipart()[-1]) for _ in range(2)]
        assert answers[0] == {"ok": False, "error": answers[0]["error"]}
        assert "internal error" in answers[0]["error"] and answers[1]["ok"] is True
        assert ingest.counters["bad_internal"] == 1
        assert "a bug in a check" in caplog.text
    finally:
        dealer.close(0)
        ingest.close(0)
