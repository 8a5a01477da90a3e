"""A connect's reads wait for the others of the same moment and go to Redis together."""
import gevent
import gevent.event
import pytest
import redis as redis_library

from app.realtime.batched_reads import BatchedReads
from tests.support import RedisServer


def batched(client, most=512):
    return BatchedReads(client, gevent.spawn, gevent.event.Event, most=most)


def together(*calls):
    """Run each call in a greenlet of its own, all at once; their results, in order."""
    workers = [gevent.spawn(call) for call in calls]
    gevent.joinall(workers, timeout=10, raise_error=False)
    return [worker.value if worker.successful() else worker.exception for worker in workers]


def test_reads_made_together_are_one_pipeline_with_each_its_own_answer(redis):
    redis.hset("user:ann", mapping={"admin": "1", "token_key": "k1"})
    redis.sadd("subs:ann", "a", "b")
    redis.sadd("subs:bob", "c")
    reads = batched(redis)
    answers = together(lambda: reads.hmget("user:ann", "admin", "token_key"),
                       lambda: reads.smembers("subs:ann"),
                       lambda: reads.smembers("subs:bob"),
                       lambda: reads.hmget("user:nobody", "admin"))
    assert answers == [[b"1", b"k1"], {b"a", b"b"}, {b"c"}, [None]]
    assert (reads.batches, reads.reads) == (1, 4)


def test_a_read_alone_is_answered_and_the_next_moment_is_a_batch_of_its_own(redis):
    redis.sadd("subs:ann", "a")
    reads = batched(redis)
    assert together(lambda: reads.smembers("subs:ann")) == [{b"a"}]
    assert together(lambda: reads.smembers("subs:ann")) == [{b"a"}]
    assert reads.batches == 2


def test_a_batch_holds_at_most_so_many_reads(redis):
    reads = batched(redis, most=3)
    answers = together(*[lambda: reads.smembers("subs:none")] * 7)
    assert answers == [set()] * 7
    assert (reads.batches, reads.reads) == (3, 7)


def test_a_failed_read_fails_only_its_reader(redis):
    redis.set("not-a-set", "x")
    reads = batched(redis)
    answers = together(lambda: reads.smembers("not-a-set"), lambda: reads.hmget("user:x", "admin"))
    assert isinstance(answers[0], redis_library.ResponseError)
    assert answers[1] == [None]


def test_redis_unreachable_fails_every_reader_and_the_next_batch_recovers(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    try:
        client = server.client()
        client.sadd("subs:ann", "a")
        reads = batched(client)
        server.stop()
        answers = together(lambda: reads.smembers("subs:ann"), lambda: reads.hmget("user:x", "a"))
        assert all(isinstance(answer, redis_library.ConnectionError) for answer in answers), answers
        server.start()
        client.sadd("subs:ann", "a")
        assert together(lambda: reads.smembers("subs:ann")) == [{b"a"}]
    finally:
        server.stop()


@pytest.mark.parametrize("command, args", [("hmget", ("user:ann", "admin")), ("smembers", ("s",))])
def test_it_answers_as_the_client_itself_does(redis, command, args):
    redis.hset("user:ann", "admin", "0")
    redis.sadd("s", "x")
    reads = batched(redis)
    assert together(lambda: getattr(reads, command)(*args)) == [getattr(redis, command)(*args)]


def test_unbatched_reads_are_made_at_once_one_by_one(redis):
    redis.sadd("subs:ann", "a")
    reads = BatchedReads.unbatched(redis)
    assert reads.smembers("subs:ann") == {b"a"} and reads.hmget("user:x", "admin") == [None]
    assert reads.shared("n", lambda client: client.incr("n")) == 1
    assert reads.batches == 3


def test_a_read_asked_before_the_next_one_waits_shares_its_pipeline(redis):
    redis.hset("user:ann", mapping={"admin": "0", "token_key": "k1"})
    redis.sadd("subs:ann", "a")
    reads = batched(redis)

    def connect():  # as a connect: subscriptions asked, then the user's record read
        asked = reads.ask("smembers", "subs:ann")
        user = reads.hmget("user:ann", "admin", "token_key")
        return user, asked.result()

    assert together(connect) == [([b"0", b"k1"], {b"a"})]
    assert (reads.batches, reads.reads) == (1, 2)


def test_an_asked_read_that_failed_raises_when_its_answer_is_taken(redis):
    redis.set("not-a-set", "x")
    reads = batched(redis)

    def connect():
        asked = reads.ask("smembers", "not-a-set")
        assert reads.hmget("user:x", "admin") == [None]
        return asked.result()

    assert isinstance(together(connect)[0], redis_library.ResponseError)


def test_a_read_asked_once_for_the_moment_is_made_once_and_answers_all_who_asked(redis):
    """The stream's state, which every resuming connect needs: in the pipeline with
    their other reads (one round trip each), yet made once for all of them."""
    redis.sadd("subs:ann", "a")
    reads = batched(redis)

    def connect():
        counted = reads.ask("incr", "counter", once="counter")
        return reads.smembers("subs:ann"), counted.result()

    assert together(connect, connect, connect) == [({b"a"}, 1)] * 3
    assert (reads.batches, reads.reads) == (1, 4)
    assert together(connect) == [({b"a"}, 2)]  # the next moment asks again
