"""One-time invite links (app/users/invites.py): made by an admin, spent once by the
invitee setting a password, gone when they expire, never stored in the clear."""
import pytest

from app.users import accounts, invites


def test_an_invite_makes_the_account_with_the_invitees_password_once(redis):
    token = invites.create(redis, "carol", admin=True, by="root")
    shown = invites.pending(redis, token)
    assert shown["name"] == "carol" and shown["admin"] is True and shown["by"] == "root"
    assert shown["expires"] - shown["created"] == invites.INVITE_TTL
    assert accounts.get_user(redis, "carol") is None  # not before the invitee sets a password

    user = invites.accept(redis, token, "carols-own-password")
    assert user["name"] == "carol" and user["admin"]
    assert accounts.authenticate(redis, "carol", "carols-own-password")
    assert invites.pending(redis, token) is None
    with pytest.raises(invites.InviteError):
        invites.accept(redis, token, "someone-elses-password")
    assert accounts.authenticate(redis, "carol", "carols-own-password")


def test_an_invite_expires_by_itself(redis):
    token = invites.create(redis, "dave")
    assert 0 < redis.ttl(invites.key(token)) <= invites.INVITE_TTL
    redis.delete(invites.key(token))  # what Redis does when the TTL runs out
    assert invites.pending(redis, token) is None
    with pytest.raises(invites.InviteError):
        invites.accept(redis, token, "daves-password")
    assert accounts.get_user(redis, "dave") is None


def test_a_short_password_leaves_the_link_usable(redis):
    token = invites.create(redis, "erin")
    with pytest.raises(accounts.AccountError, match="at least 8"):
        invites.accept(redis, token, "short")
    assert invites.pending(redis, token)["name"] == "erin"
    invites.accept(redis, token, "long-enough")


def test_a_taken_or_bad_name_is_refused_and_unknown_tokens_are_nothing(redis):
    accounts.create_user(redis, "frank", "franks-password")
    with pytest.raises(accounts.AccountError, match="taken"):
        invites.create(redis, "frank")
    with pytest.raises(accounts.AccountError):
        invites.create(redis, "no spaces")
    for token in ("", None, "not-a-token"):
        assert invites.pending(redis, token) is None
    with pytest.raises(invites.InviteError):
        invites.accept(redis, "not-a-token", "a-good-password")


def test_the_token_is_not_stored_in_the_clear(redis):
    token = invites.create(redis, "gina")
    for name in redis.scan_iter(match=invites.INVITE + "*"):
        assert token not in name.decode() and token not in redis.get(name).decode()


def test_pending_invites_are_listed_until_used_withdrawn_or_expired(redis):
    carol = invites.create(redis, "carol", by="root")
    dave = invites.create(redis, "dave", admin=True, by="root", ttl=60)
    erin = invites.create(redis, "erin", by="root", ttl=invites.INVITE_TTL + 60)
    listed = invites.listing(redis)
    assert [i["name"] for i in listed] == ["dave", "carol", "erin"]  # the soonest to expire first
    assert listed[0]["admin"] is True and listed[0]["by"] == "root"
    assert listed[1]["id"] == invites.digest(carol) and carol not in str(listed)

    invites.accept(redis, carol, "carols-password")
    redis.delete(invites.key(dave))  # what Redis does when the TTL runs out
    assert [i["name"] for i in invites.listing(redis)] == ["erin"]
    assert redis.zcard(invites.INVITES) == 1  # the index keeps no dead entries

    assert invites.withdraw(redis, invites.digest(erin))["name"] == "erin"
    assert invites.pending(redis, erin) is None and invites.listing(redis) == []
    with pytest.raises(invites.InviteError):
        invites.accept(redis, erin, "erins-password")
    for gone in (invites.digest(erin), "not-an-id", "", None):
        assert invites.withdraw(redis, gone) is None
