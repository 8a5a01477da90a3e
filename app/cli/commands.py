"""Registers every Flask command group on the app."""
from app.cli.notify import notify
from app.cli.users import apikeys, users
from app.digests.cli import digest
from app.spark.cli import spark
from app.webhooks.cli import webhooks


def init_app(app):
    """Add Herald's commands to ``app.cli``."""
    for command in (webhooks, digest, spark, users, apikeys, notify):
        app.cli.add_command(command)
