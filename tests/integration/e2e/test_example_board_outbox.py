"""The example board on Herald's transactional outbox (issue 26), end to end.

The board commits its cards and ``herald.track`` has each commit write the
change's event to ``herald_outbox`` in the board's own SQLite file; the
board's relay ships the rows. These tests read that file, Herald's history
and real Chromium pages: a change made between a page's render and its
subscription reaches the page by the cursor it was rendered with; the
activity list says what changed; every change is one data event, in
order, never in anyone's inbox; ``flask herald relay --once`` ships what a
process left behind.
"""
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

import pytest
import requests
from playwright.sync_api import expect
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from app.stream.envelope import id_key
from app.stream.keys import STREAM
from app.users import accounts, subscriptions
from tests.databases import postgres_server
from tests.integration.e2e import test_example_board as shared
from tests.integration.e2e.test_example_board import SEEN, add_card, card, open_board
from tests.support import EXAMPLE_JWT_SECRET, ROOT, ExampleApp, LiveServer, free_port, wait_until

board = shared.board  # the fixture: Herald and the board (browsers: conftest.py contexts)


def outbox(database):
    """The board's outbox rows, oldest first: ``(id, topic, herald_id, error)``;
    ``database``: its SQLite file, or a SQLAlchemy URL."""
    url = database if isinstance(database, str) else f"sqlite:///{database}"
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(
                "SELECT id, topic, herald_id, error FROM herald_outbox ORDER BY id"))]
    finally:
        engine.dispose()


def shipped(database, count):
    """Wait until ``count`` rows are in the outbox and all were sent; the rows."""
    def done():
        rows = outbox(database)
        return rows if len(rows) == count and all(r[2] for r in rows) else None
    return wait_until(done, timeout=10, message=f"{count} outbox rows shipped")


def signed_in(example, user):
    """A requests session signed in to the board as ``user``."""
    session = requests.Session()
    reply = session.post(example.url + "/login", timeout=5,
                         data={"username": user, "password": "board-demo"})
    assert reply.url == example.url + "/", reply.text
    return session


def api(session, example, method, path="", **body):
    reply = session.request(method, example.url + "/api/cards" + path, json=body or None,
                            timeout=5)
    reply.raise_for_status()
    return reply.json() if reply.content else None


def test_a_change_committed_between_render_and_subscription_is_shown(board, contexts):
    herald, example = board
    alice = signed_in(example, "alice")
    made = api(alice, example, "POST", title="Write docs")
    shipped(example.db_path, 1)  # so that bob's page has a cursor to render

    page = contexts().new_page()
    page.set_default_timeout(10_000)
    page.context.request.post(example.url + "/login",  # the context's cookies: bob signed in
                              form={"username": "bob", "password": "board-demo"})
    asked = []
    page.on("request", lambda request: asked.append(request.url))
    held = []
    page.route("**/herald/herald.js", lambda route: held.append(route))  # no client yet
    with page.expect_request("**/herald/herald.js"):
        rendered = page.goto(example.url + "/", wait_until="commit")
    cursor = json.loads(re.search(r'id="board-config">(.*?)</script>',
                                  rendered.text()).group(1))["cursor"]

    # Meanwhile alice moves the card; the board commits it and its relay ships it.
    api(alice, example, "PATCH", f"/{made['id']}", column="doing")
    moved = shipped(example.db_path, 2)[-1][2]
    assert cursor is not None and id_key(cursor) < id_key(moved)  # bob's page was older

    while not held:  # the route handler runs inside Playwright's calls
        page.wait_for_timeout(20)
    for route in held:
        route.continue_()
    page.unroute("**/herald/herald.js")
    page.wait_for_selector("#live[data-state=connected]")
    expect(page.locator('[data-column="doing"] .card-item .title')).to_have_text(
        ["Write docs"], timeout=SEEN)
    expect(page.locator('[data-column="todo"] .card-item')).to_have_count(0)
    # It came from Herald's history after the cursor, not from loading the cards again.
    assert not [url for url in asked if url.startswith(example.url + "/api/cards")]
    assert [url for url in asked
            if url.startswith(herald.url + "/api/notifications?") and f"after={cursor}" in url]


def test_the_activity_list_says_what_changed(board, contexts):
    herald, example = board
    alice, bob = open_board(contexts, example, "alice"), open_board(contexts, example, "bob")
    add_card(alice, "Write docs")
    expect(bob.locator("#activity li").first).to_contain_text(
        "alice added “Write docs” to To do", timeout=SEEN)
    card(alice, "Write docs").locator("select.move").select_option("doing")
    expect(bob.locator("#activity li").first).to_contain_text(
        "alice moved “Write docs” from To do to Doing", timeout=SEEN)
    card(bob, "Write docs").locator("select.assign").select_option("carol")
    expect(alice.locator("#activity li").first).to_contain_text(
        "bob assigned “Write docs” to carol", timeout=SEEN)
    card(bob, "Write docs").locator("button.delete").click()
    expect(alice.locator("#activity li").first).to_contain_text("bob deleted “Write docs”",
                                                                timeout=SEEN)
    expect(alice.locator("#activity li")).to_have_count(4)
    # A reload keeps them: the list starts from Herald's history, newest first.
    alice.reload()
    expect(alice.locator("#activity li")).to_have_count(4, timeout=SEEN)
    expect(alice.locator("#activity li").first).to_contain_text("bob deleted “Write docs”")
    expect(alice.locator("#activity li").last).to_contain_text("alice added “Write docs”")


def test_each_change_is_one_data_event_in_order_and_in_no_inbox(board, redis):
    herald, example = board
    alice = signed_in(example, "alice")
    first = api(alice, example, "POST", title="First")
    second = api(alice, example, "POST", title="Second", column="doing")
    api(alice, example, "PATCH", f"/{first['id']}", title="First, renamed")
    api(alice, example, "PATCH", f"/{second['id']}", column="done", assignee="bob")
    api(alice, example, "PATCH", f"/{first['id']}", title="First, renamed")  # no change
    api(alice, example, "DELETE", f"/{first['id']}")
    shipped_rows = shipped(example.db_path, 6)
    # bob's alert for his assignment is in the assignment's own transaction, after its change
    assert [r[1] for r in shipped_rows] == ["board.card.created", "board.card.created",
                                            "board.card.updated", "board.card.updated",
                                            "board.alert", "board.card.deleted"]
    assert all(r[3] is None for r in shipped_rows)
    rows = [r for r in shipped_rows if r[1].startswith("board.card.")]

    accounts.create_user(redis, "root", "root-password", admin=True)
    subscriptions.add(redis, "root", ["board"], limit=10)
    token = herald.token("root", "root-password")

    def history(**params):
        reply = requests.get(herald.url + "/api/notifications", timeout=5,
                             params=dict(after="0", **params),
                             headers={"Authorization": f"Bearer {token}"})
        reply.raise_for_status()
        return [n for n in reply.json()["notifications"] if n["topic"].startswith("board.card.")]

    events = history(kind="data")
    assert [n["id"] for n in events] == [r[2] for r in rows]  # one each, in commit order
    assert [(n["data"]["id"], n["data"]["version"]) for n in events] == [
        (first["id"], 1), (second["id"], 1), (first["id"], 2), (second["id"], 2),
        (first["id"], 2)]
    assert events[-1]["data"]["updated_by"] == "alice"
    assert events[3]["title"] == "alice moved “Second” from Doing to Done and assigned it to bob"
    assert history() == []  # the inbox: no data events...
    assert len(history(kind="all")) == 5  # ...which it would see under kind=all


def test_flask_herald_relay_once_ships_what_the_board_left(board, tmp_path, redis):
    herald, example = board
    env = dict(example.env, BOARD_DB=str(tmp_path / "left.db"), HERALD_OUTBOX_RELAY="0")
    commit = ("from examples.board.app import create_app\n"
              "client = create_app().test_client()\n"
              "client.post('/login', data={'username': 'carol', 'password': 'board-demo'})\n"
              "assert client.post('/api/cards', json={'title': 'Left behind'}).status_code == 201\n")
    subprocess.run([sys.executable, "-c", commit], cwd=ROOT, env=env, check=True, timeout=60)
    assert [r[2] for r in outbox(tmp_path / "left.db")] == [None]  # committed, not shipped

    relay = [sys.executable, "-m", "flask", "--app", "examples.board.app:create_app", "herald",
             "relay", "--once"]
    done = subprocess.run(relay, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "shipped 1 outbox rows" in done.stdout
    (row,) = outbox(tmp_path / "left.db")
    assert row[2] is not None and redis.xrange(STREAM, min=row[2], max=row[2])  # in Herald
    again = subprocess.run(relay, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "shipped 0 outbox rows" in again.stdout  # once only


@pytest.fixture(params=["sqlite", "postgresql"])
def board_database(request, redis_server, redis, tmp_path):
    """Herald and the board on SQLite (BOARD_DB) or PostgreSQL (BOARD_DATABASE_URL):
    ``(herald, example, database)``, database as :func:`outbox` takes it."""
    with ExitStack() as stack:
        env, database = {}, tmp_path / "board.db"
        if request.param == "postgresql":
            database = env["BOARD_DATABASE_URL"] = stack.enter_context(postgres_server("board"))
        port = free_port()
        herald = LiveServer(redis_server.url, tmp_path, JWT_SECRET=EXAMPLE_JWT_SECRET,
                            SOCKETIO_ORIGINS=f"http://127.0.0.1:{port}")
        herald.start()
        stack.callback(herald.stop)
        example = ExampleApp(herald.url, accounts.create_api_key(redis, "board"), tmp_path, port,
                             **env)
        example.start()
        stack.callback(example.stop)
        yield herald, example, database


def test_edits_at_once_are_each_one_event_in_version_order(board_database, redis):
    """Eight users' renames of one card, all at once: each is committed (the row is
    locked, or SQLite's write begun, before the card is read), each is one event,
    and the events' versions rise one by one in Herald's order."""
    herald, example, database = board_database
    made = api(signed_in(example, "alice"), example, "POST", title="Contested")
    sessions = [signed_in(example, ("alice", "bob", "carol")[i % 3]) for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(
            lambda i: api(sessions[i], example, "PATCH", f"/{made['id']}", title=f"take {i}"),
            range(8)))
    assert sorted(a["version"] for a in answers) == list(range(2, 10))
    rows = shipped(database, 9)
    accounts.create_user(redis, "root", "root-password", admin=True)
    subscriptions.add(redis, "root", ["board"], limit=10)
    reply = requests.get(herald.url + "/api/notifications", timeout=5,
                         params={"after": "0", "kind": "data"},
                         headers={"Authorization": "Bearer " + herald.token("root",
                                                                            "root-password")})
    data = [n["data"] for n in reply.json()["notifications"]]
    assert [n["version"] for n in data] == list(range(1, 10))
    assert [n["id"] for n in reply.json()["notifications"]] == [r[2] for r in rows]
