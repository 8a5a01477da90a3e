"""Fuzz tests tally the inputs they tried (the totals are printed at the end of the run),
and share an in-process app on a fresh Redis with an admin who may do everything."""
from collections import Counter

import pytest

from app import create_app
from app.settings import TestConfig
from app.users import accounts
from tests import support

TRIED = Counter()  # what was fuzzed -> inputs sent


def pytest_terminal_summary(terminalreporter):
    if TRIED:
        terminalreporter.section("fuzzed inputs")
        for name, count in sorted(TRIED.items()):
            terminalreporter.write_line(f"{name}: {count}")
        terminalreporter.write_line(f"total: {sum(TRIED.values())}")


@pytest.fixture(scope="module")
def admin_app(redis_server):
    """``(app, root's token)``: an app whose rate limits are out of the fuzzers' way,
    on an emptied Redis with one admin, ``root``."""
    client = redis_server.client()
    client.flushall()
    accounts.create_user(client, "root", "root-password", admin=True)
    app = create_app(TestConfig(redis_server.url, RATELIMIT_API_KEY="100000 per second",
                                RATELIMIT_TOKEN="100000 per minute"))
    support.current_redis = client
    yield app, support.issue_token("root")
    client.close()
