"""app/users/accounts.py: the born floor is written in a step of its own, before the
account changes (on a Redis Cluster it is not in the accounts' hash slot), so that a
process dying between the two steps leaves it too high, never too low."""
import pytest

from app.stream import history
from app.stream.keys import BORN
from app.stream.publish import Bus
from app.stream.shards import stream_id
from app.users import accounts


@pytest.fixture(autouse=True)
def cheap_hashes(monkeypatch):
    """A password hash of a cheap method (any werkzeug hash checks): these tests make many."""
    real = accounts.generate_password_hash
    monkeypatch.setattr(accounts, "generate_password_hash",
                        lambda password: real(password, method="pbkdf2:sha256:1000"))


class Died(BaseException):
    """The process died here."""


def dies(*args, **kwargs):
    raise Died


def floor(redis, name):
    value = redis.get(BORN + name)
    return value.decode() if value else None


def test_a_taken_name_is_refused_and_its_floor_left_alone(redis):
    accounts.create_user(redis, "carol", "carol-password")
    born = floor(redis, "carol")
    mine = Bus(redis).publish("hr", "x", user="carol")
    with pytest.raises(accounts.AccountError, match="already exists"):
        accounts.create_user(redis, "carol", "other-password")
    assert floor(redis, "carol") == born
    assert history.one(redis, "carol", ["hr"], mine) is not None, "still carol's"


def test_a_creation_that_died_after_the_floor_can_be_made_again(redis, monkeypatch):
    before = Bus(redis).publish("hr", "for a former carol", user="carol")
    real = accounts._create_once
    monkeypatch.setattr(accounts, "_create_once", dies)
    with pytest.raises(Died):
        accounts.create_user(redis, "carol", "carol-password")
    monkeypatch.setattr(accounts, "_create_once", real)
    assert floor(redis, "carol") == stream_id(before)  # raised: what came before is not the next carol's
    assert accounts.get_user(redis, "carol") is None
    accounts.create_user(redis, "carol", "carol-password")
    assert accounts.authenticate(redis, "carol", "carol-password")["name"] == "carol"
    assert [u["name"] for u in accounts.list_users(redis)] == ["carol"]


def test_a_removal_that_died_after_the_floor_hides_and_can_be_done_again(redis, monkeypatch):
    accounts.create_user(redis, "carol", "carol-password")
    mine = Bus(redis).publish("hr", "x", user="carol")
    real = redis.pipeline
    monkeypatch.setattr(redis, "pipeline", dies)
    with pytest.raises(Died):
        accounts.remove_account(redis, "carol")
    monkeypatch.setattr(redis, "pipeline", real)
    assert floor(redis, "carol") == stream_id(mine)  # too high (hides carol's own), never too low
    assert accounts.get_user(redis, "carol") is not None
    accounts.remove_account(redis, "carol")
    assert accounts.get_user(redis, "carol") is None and accounts.list_users(redis) == []
