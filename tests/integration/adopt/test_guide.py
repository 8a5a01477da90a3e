"""docs/adopt.md, step by step, on a copy of the app it builds (examples/adopt, Chirp):
the code it shows is the app's own, the migration it commits is what ``flask db
migrate`` makes, ``flask db upgrade`` runs it on SQLite and PostgreSQL with nothing
left over, and then a message, a post and a job flow from the app to Herald, each
exactly once (issue 34, item 9)."""
import re
import shutil

import jwt
import pytest

from app.users import accounts
from tests.integration.adopt.chirp_app import JWT_SECRET, Chirp, copy_example, csrf_token
from tests.integration.outbox.support import stream
from tests.support import ROOT, Listener, LiveServer, free_port, wait_until

GUIDE = ROOT / "docs" / "adopt.md"
# <!-- file: chirp/models.py --> before a code block: the block is that file's, in parts
# separated by a line "..." (or "# ...", "{# ... #}").
EXCERPT = re.compile(r"<!-- file: (\S+) -->\s*\n```[a-z]*\n(.*?)\n```", re.S)
NO_HERALD, NO_REDIS = "http://127.0.0.1:9", "redis://127.0.0.1:9/0"  # never reached: not needed
ELISION = re.compile(r"^\s*(\.\.\.|# \.\.\.|// \.\.\.|\{# \.\.\. #\})\s*$")


def excerpts():
    return EXCERPT.findall(GUIDE.read_text())


def parts(block):
    found, part = [], []
    for line in block.splitlines():
        if ELISION.match(line):
            found.append(part)
            part = []
        else:
            part.append(line.rstrip())
    return [p for p in [*found, part] if any(line.strip() for line in p)]


def test_the_guide_shows_the_apps_own_code():
    shown = excerpts()
    assert len(shown) >= 12, "the guide should show the app's code, file by file"
    for path, block in shown:
        source = "\n".join(line.rstrip() for line in
                           (ROOT / "examples" / "adopt" / path).read_text().splitlines())
        for part in parts(block):
            text = "\n".join(part).strip("\n")
            assert text in source, f"docs/adopt.md shows this from {path}, which has it not:\n{text}"


def test_the_committed_migration_is_what_flask_db_migrate_makes(tmp_path, sqlite_url):
    """Step "Migrations": on a copy without migrations, ``flask db init`` and ``flask db
    migrate`` make the migration the example commits, outbox table included, as is."""
    app = copy_example(tmp_path)
    committed = next((app / "migrations" / "versions").glob("*.py")).read_text()
    shutil.rmtree(app / "migrations")
    chirp = Chirp(NO_HERALD, "no-key", NO_REDIS, sqlite_url, tmp_path, source=app)
    chirp.flask("db", "init")
    made = chirp.flask("db", "migrate", "-m", "users, posts, messages, exports")
    assert "Detected added table 'herald_outbox'" in made
    generated = next((app / "migrations" / "versions").glob("*.py")).read_text()
    assert _operations(generated) == _operations(committed)


def _operations(migration):
    """A migration's upgrade and downgrade, without its revision ids and date."""
    return migration[migration.index("def upgrade"):]


def test_the_committed_migrations_run_and_leave_nothing_to_migrate(tmp_path, database_url):
    app = copy_example(tmp_path)
    chirp = Chirp(NO_HERALD, "no-key", NO_REDIS, database_url, tmp_path, source=app)
    assert "Running upgrade" in chirp.flask("db", "upgrade")
    assert "No changes in schema detected" in chirp.flask("db", "migrate")
    assert "demo users" in chirp.flask("seed")


@pytest.fixture
def stack(redis_server, redis, tmp_path, database_url):
    """Herald (accepting Chirp's tokens and origin) and a copy of Chirp migrated, seeded,
    served and with its worker; all stopped after."""
    port = free_port()
    herald = LiveServer(redis_server.url, tmp_path, JWT_SECRET=JWT_SECRET,
                        SOCKETIO_ORIGINS=f"http://127.0.0.1:{port}")
    herald.start()
    chirp = Chirp(herald.url, accounts.create_api_key(redis, "chirp"), redis_server.url,
                  database_url, tmp_path, source=copy_example(tmp_path), port=port)
    try:
        chirp.flask("db", "upgrade")
        chirp.flask("seed")
        chirp.start()
        chirp.start_worker()
        yield herald, chirp
    finally:
        chirp.stop()
        herald.stop()


def user_id(session, chirp):
    """The signed-in user's Herald id, from the token Chirp mints for its pages."""
    token = session.get(chirp.url + "/herald/token", timeout=5).json()["token"]
    return jwt.decode(token, options={"verify_signature": False})["sub"], token


def test_a_message_a_post_and_a_job_reach_herald_exactly_once(stack, redis):
    herald, chirp = stack
    alice, bob = chirp.sign_in("alice"), chirp.sign_in("bob")
    alice_id, _ = user_id(alice, chirp)
    bob_id, bob_token = user_id(bob, chirp)
    listener = Listener(herald, bob_token)  # Herald takes Chirp's token for bob
    # The seed's commit (three users: one timeline refresh) reaches Herald first.
    wait_until(lambda: [n["topic"] for n in stream(redis)] == ["timeline.refresh"], timeout=10,
               message="the seed's refresh")
    seeded = len(stream(redis))
    try:
        page = alice.get(chirp.url + "/messages", timeout=5).text
        assert alice.post(chirp.url + "/messages", timeout=5, data={
            "to": bob_id, "body": "Lunch?", "csrf_token": csrf_token(page)}).ok
        page = alice.get(chirp.url + "/", timeout=5).text
        assert alice.post(chirp.url + "/posts", timeout=5, data={
            "body": "Hello, Herald", "csrf_token": csrf_token(page)}).ok
        page = alice.get(chirp.url + "/export", timeout=5).text
        assert alice.post(chirp.url + "/export", timeout=5, headers={"Accept": "application/json"},
                          data={"csrf_token": csrf_token(page)}).status_code == 202

        def topics():
            return [n["topic"] for n in stream(redis)[seeded:]]
        wait_until(lambda: "job.export.succeeded" in topics() and "posts.created" in topics(),
                   timeout=20, message="the job's end and the post in Herald's stream")
        published = stream(redis)[seeded:]
        once = [t for t in topics() if t != "job.export.progress"]
        assert sorted(once) == sorted(["messages.new", "posts.created", "timeline.refresh",
                                       "job.export.started", "job.export.succeeded"]), once
        message = next(n for n in published if n["topic"] == "messages.new")
        assert (message["user"], message["url"]) == (bob_id, chirp.url + "/messages")
        post = next(n for n in published if n["topic"] == "posts.created")
        assert (post["kind"], post["data"]["body"], post["data"]["author_id"]) == (
            "data", "Hello, Herald", int(alice_id))
        job = [n for n in published if n["topic"].startswith("job.export.")]
        assert {n["user"] for n in job} == {alice_id}
        assert len({n["correlation_id"] for n in job}) == 1
        assert job[-1]["data"]["rows"] == 1
        # Bob's connection, on Chirp's token, got his message and none of alice's job.
        wait_until(lambda: "messages.new" in listener.topics(), timeout=10, message="bob's alert")
        assert not [t for t in listener.topics() if t.startswith("job.")]
    finally:
        listener.close()
