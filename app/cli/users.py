"""``flask --app wsgi users ...`` and ``apikeys ...``: accounts and publisher keys."""
import click
from flask.cli import AppGroup

from app.cli.common import on_redis, when
from app.users import accounts, purge

users = AppGroup("users", help="Manage user accounts.")
apikeys = AppGroup("apikeys", help="Manage publisher API keys.")


@users.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="Give the user the admin role.")
@click.option("--password", prompt=True, hide_input=True, confirmation_prompt=True,
              help="The password (asked for when not given).")
def create_user(name, admin, password):
    """Create user NAME."""
    on_redis(accounts.create_user, name, password, admin=admin)
    click.echo(f"created {'admin' if admin else 'user'} {name}")


@users.command("list")
def list_users():
    """List the users: name, role and when each was created."""
    found = on_redis(accounts.list_users)
    for user in found:
        role = "admin" if user["admin"] else "user"
        click.echo(f"{user['name']}\t{role}\tcreated {when(user['created'])}")
    if not found:
        click.echo("no users", err=True)


@users.command("set-password")
@click.argument("name")
@click.option("--password", prompt="New password", hide_input=True, confirmation_prompt=True,
              help="The new password (asked for when not given).")
def set_password(name, password):
    """Set user NAME's password; the tokens they hold stop working."""
    on_redis(accounts.set_password, name, password)
    click.echo(f"set the password of {name}")


@users.command("delete")
@click.argument("name")
@click.confirmation_option(prompt="Delete this user, with their subscriptions, read state "
                                  "and digests?")
def delete_user(name):
    """Delete user NAME and everything that was theirs (app/users/purge.py); their
    sessions, tokens and open connections end at once, and a new user NAME will
    see none of their private notifications."""
    on_redis(purge.delete_user, name)
    click.echo(f"deleted user {name}")


@apikeys.command("create")
@click.argument("name")
def create_api_key(name):
    """Create a publisher API key NAME; the key is printed once and not kept."""
    key = on_redis(accounts.create_api_key, name)
    click.echo(key)


@apikeys.command("list")
def list_api_keys():
    """List the API keys: name and when each was created (keys themselves are not kept)."""
    keys = on_redis(accounts.list_api_keys)
    for key in keys:
        click.echo(f"{key['name']}\tcreated {when(key['created'])}")
    if not keys:
        click.echo("no API keys", err=True)


@apikeys.command("revoke")
@click.argument("name")
def revoke_api_key(name):
    """Revoke API key NAME: requests that carry it are refused from now on."""
    on_redis(accounts.revoke_api_key, name)
    click.echo(f"revoked API key {name}")


@users.command("revoke-tokens")
@click.argument("name")
def revoke_tokens(name):
    """Void every token issued so far to user NAME (they sign in again for new ones)."""
    on_redis(accounts.revoke_tokens, name)
    click.echo(f"revoked the tokens of {name}")
