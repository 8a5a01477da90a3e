"""Deleting a user: the account and every per-user key, so that a new account with
the same name starts clean (docs/contract.md, account identity).

What a user has, by name: the account hash (accounts.py), subscriptions,
read state (three keys), archived and snoozed ids (and their entries in the
shared snooze schedule), preferences, email digests (the ones their
preferences manage included). The per-user keys share the user's hash tag
(app/key_layout.py), so one DEL removes them on a Redis Cluster too; the
schedule's entries go after them, as unsnoozing does (a process that dies in
between leaves entries that the waker drops, app/users/snooze_schedule.py).
Private notifications addressed to the name stay in the shared history, which
cannot be rewritten cheaply; the born floor (app.stream.keys.BORN) hides them
from whoever holds the name next.

    purge.delete_user(client, "carol")
"""
from app.digests import store as digests
from app.users import accounts, archive_and_snooze, bulk_by_filter, preferences, read_state, subscriptions


def per_user_keys(name):
    """Every Redis key that belongs to user ``name`` alone."""
    return [subscriptions.key(name), *read_state.keys_of(name), *archive_and_snooze.keys_of(name),
            preferences.key(name), *bulk_by_filter.keys_of(name)]


def delete_user(client, name):
    """Delete user ``name`` and everything that was theirs; raises accounts.AccountError
    when there is no such user."""
    accounts.remove_account(client, name)
    purge(client, name)


def purge(client, name):
    """Remove every per-user key of ``name``, their snoozes and their digests."""
    client.delete(*per_user_keys(name))
    archive_and_snooze.forget_snoozes(client, name)
    for record in digests.list_all(client, owner=name):
        digests.delete(client, record["id"], name)
