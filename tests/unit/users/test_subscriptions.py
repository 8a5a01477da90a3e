"""Subscriptions in Redis: changes and their announcements on herald:control."""
import pytest

from app.stream import control
from app.stream.keys import CONTROL
from app.users import subscriptions
from tests.support import wait_until


@pytest.fixture
def announcements(redis):
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(CONTROL)
    heard = []

    def read():
        while (message := pubsub.get_message(timeout=0.05)) is not None:
            heard.append(control.decode(message["data"]))
        return heard
    yield read
    pubsub.close()


def test_each_change_is_announced_with_the_full_list_after_it(redis, announcements):
    assert subscriptions.add(redis, "ann", ["news", "ops"], limit=10) == (["news", "ops"], ["news", "ops"])
    assert subscriptions.add(redis, "ann", ["news"], limit=10) == (["news", "ops"], [])  # nothing new
    assert subscriptions.remove(redis, "ann", ["news", "gone"]) == (["ops"], ["news"])
    assert subscriptions.remove(redis, "ann", ["ops"]) == ([], ["ops"])
    heard = wait_until(lambda: len(announcements()) == 3 and announcements(), message="announcements")
    assert [change.data for change in heard] == [
        (["news", "ops"], [], ["news", "ops"]), ([], ["news"], ["ops"]), ([], ["ops"], [])]
    assert all(change.kind == control.SUBSCRIPTIONS and change.user == "ann" for change in heard)


def test_the_limit_is_kept_and_a_refused_change_changes_nothing(redis, announcements):
    subscriptions.add(redis, "ann", ["a", "b"], limit=3)
    with pytest.raises(subscriptions.SubscriptionError, match="at most 3 subscriptions per user"):
        subscriptions.add(redis, "ann", ["c", "d"], limit=3)
    assert subscriptions.list_topics(redis, "ann") == ["a", "b"]
    assert subscriptions.add(redis, "ann", ["a", "c"], limit=3) == (["a", "b", "c"], ["c"])
