"""Flask-Migrate sees Herald's outbox table: ``flask db migrate`` in a host app renders it
whole, the migration runs unchanged on SQLite and on PostgreSQL, and a second
``flask db migrate`` proposes nothing (issue 34, item 2)."""
import os
import subprocess
import sys

import pytest
from sqlalchemy import create_engine, inspect, text

HOST_APP = '''
import os
from flask import Flask
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy.orm import Mapped, mapped_column
from herald_client.flask import Herald

db = SQLAlchemy()
herald = Herald()


class Post(db.Model):
    id: Mapped[int] = mapped_column(primary_key=True)
    body: Mapped[str] = mapped_column(db.String(140))


herald.track(Post, prefix="posts", refresh="timeline")


def create_app():
    app = Flask(__name__)
    app.config.update(SQLALCHEMY_DATABASE_URI=os.environ["DATABASE_URL"],
                      HERALD_URL="http://127.0.0.1:9", HERALD_OUTBOX_RELAY=False)
    db.init_app(app)
    Migrate(app, db)
    herald.init_app(app)

    @app.post("/posts")
    def post():
        db.session.add(Post(body="hello"))
        herald.publish("posts.alert", "A new post")
        db.session.commit()
        return "", 201
    return app
'''


def flask(folder, database_url, *args):
    env = dict(os.environ, DATABASE_URL=database_url, PYTHONPATH=str(folder))
    done = subprocess.run([sys.executable, "-m", "flask", "--app", "hostapp:create_app", *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.fixture
def host_app(tmp_path):
    (tmp_path / "hostapp.py").write_text(HOST_APP)
    return tmp_path


def outbox_rows(database_url):
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            return connection.execute(text("SELECT topic, seq FROM herald_outbox ORDER BY id")).all()
    finally:
        engine.dispose()


def test_a_migration_made_by_flask_db_migrate_makes_the_outbox_and_nothing_is_left_over(
        host_app, database_url):
    flask(host_app, database_url, "db", "init")
    made = flask(host_app, database_url, "db", "migrate", "-m", "posts")
    assert "Detected added table 'herald_outbox'" in made
    flask(host_app, database_url, "db", "upgrade")
    engine = create_engine(database_url)
    try:
        assert {"herald_outbox", "post"} <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert "No changes in schema detected" in flask(host_app, database_url, "db", "migrate")
    # The migrated table works: a view's commit writes its rows, numbered in commit order.
    sys.path.insert(0, str(host_app))
    try:
        os.environ["DATABASE_URL"] = database_url
        import hostapp
        app = hostapp.create_app()
        assert app.test_client().post("/posts").status_code == 201
        with app.app_context():
            hostapp.db.engine.dispose()
        hostapp.herald.outbox.close()
    finally:
        sys.path.remove(str(host_app))
        sys.modules.pop("hostapp", None)
        os.environ.pop("DATABASE_URL", None)
    rows = outbox_rows(database_url)
    assert [topic for topic, _seq in rows] == ["posts.created", "timeline.refresh", "posts.alert"]
    assert all(seq is not None for _topic, seq in rows)


def test_a_migration_made_on_sqlite_runs_unchanged_on_postgresql(host_app, tmp_path,
                                                                 postgres_url):
    sqlite_url = f"sqlite:///{tmp_path / 'dev.db'}"
    flask(host_app, sqlite_url, "db", "init")
    flask(host_app, sqlite_url, "db", "migrate", "-m", "posts")
    flask(host_app, postgres_url, "db", "upgrade")
    assert "No changes in schema detected" in flask(host_app, postgres_url, "db", "migrate")
