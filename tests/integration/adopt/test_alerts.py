"""Alerts from a host app go through the outbox (issue 34, items 1, 3, 4, 8 and 9):
``herald.publish`` joins the view's transaction (commit: exactly once; rollback:
never), returns at once with Herald away, and the relay starts itself; testing
mode sends nothing and records; jobs; links; and ``herald.client``'s deadline."""
import json
import os
import socket
import subprocess
import sys
import threading

import click
import pytest
from flask import Flask, render_template_string

from herald_client import InvalidNotification, Unavailable
from herald_client.flask import Herald
from tests.integration.adopt.host import create_app
from tests.integration.outbox.support import close_host, hosts, stream
from tests.support import ROOT, wait_for, wait_until


@pytest.fixture
def host(database_url):
    """``host(server, api_key, **config)``: the host app on ``database_url``, its Herald
    extension (closed after)."""
    with hosts(create_app, database_url) as make:
        yield make


def topics(redis):
    return [envelope["topic"] for envelope in stream(redis)]


def test_an_alert_joins_the_views_transaction(host, live_server, redis, api_key):
    """Commit: the post, its page refresh and the alert, once each, in that order, the
    alert's path made a link to the host app. Rollback: nothing at all."""
    app, herald = host(live_server, api_key)
    client = app.test_client()
    assert client.post("/posts?fail=1", json={"body": "never"}).status_code == 500
    reply = client.post("/posts", json={"body": "hello"}, base_url="https://host.example")
    assert reply.status_code == 201
    wait_until(lambda: len(stream(redis)) == 3, timeout=10, message="the commit's three")
    assert topics(redis) == ["posts.created", "timeline.refresh", "messages.new"]
    alert = stream(redis)[2]
    assert (alert["title"], alert["user"], alert["url"]) == ("New post: hello", "7",
                                                             "https://host.example/posts")
    assert "kind" not in alert and "version" not in alert.get("data", {})
    assert stream(redis)[1]["data"] == {"stream": "timeline"}
    with app.app_context():  # marked sent after Herald stored them: wait on the rows
        engine = app.extensions["host"]["db"].engine
        wait_for(lambda: herald.outbox.counts(engine),
                 lambda counts: counts == {"pending": 0, "sent": 3, "refused": 0},
                 message="the three rows marked sent")
    # A page rendered now connects from where it is as of: the last id shipped.
    herald.user_loader(lambda: None)  # signed out: no token, the cursor all the same
    with app.test_request_context("/"):
        html = render_template_string("{{ herald_scripts() }}")
    settings = json.loads(html.split('id="herald-connect">', 1)[1].split("</script>", 1)[0])
    assert settings["lastId"] == alert["id"]


def test_an_alert_from_a_view_that_wrote_nothing_is_its_own_transaction(
        host, live_server, redis, api_key):
    app, _herald = host(live_server, api_key)
    assert app.test_client().post("/ping", json={"body": "one"}).status_code == 204
    wait_until(lambda: topics(redis) == ["ops.ping"], timeout=10, message="the ping")


def test_with_herald_away_a_view_answers_and_its_alert_arrives_once_when_herald_is_back(
        host, live_server, redis, api_key):
    app, herald = host(live_server, api_key)
    live_server.stop()
    client = app.test_client()
    for body in ("first", "second"):
        assert client.post("/posts", json={"body": body}).status_code == 201
    with app.app_context():
        engine = app.extensions["host"]["db"].engine
        wait_until(lambda: herald.outbox.relay.failures > 0, timeout=10,
                   message="the relay finding Herald away")
        assert herald.outbox.counts(engine)["pending"] == 6
        said = herald.outbox.relay.last_error  # what its log says: why...
        assert "did not confirm the publish" in said and "ublish again" not in said  # ...only
    live_server.start()
    herald.outbox.relay.base = 0.05  # try again soon (its first waits may be long)
    herald.outbox.relay.wake()
    wait_until(lambda: len(stream(redis)) == 6, timeout=40, message="both commits")
    assert topics(redis) == ["posts.created", "timeline.refresh", "messages.new"] * 2
    assert [e["title"] for e in stream(redis) if e["topic"] == "messages.new"] == [
        "New post: first", "New post: second"]


def test_the_relay_starts_itself_where_the_app_is_made_and_ships_what_a_dead_process_left(
        database_url, live_server, redis, api_key):
    """A process commits with no relay and dies at once; a process that only makes the
    app (as gunicorn or a job worker does, no request, no commit) ships its rows."""
    env = dict(os.environ, HOST_DATABASE_URL=database_url, HERALD_URL=live_server.url,
               HERALD_API_KEY=api_key, HERALD_OUTBOX_RELAY="0", PYTHONPATH=str(ROOT))
    committing = ("from tests.integration.adopt.host import create_app; import os; "
                  "c = create_app().test_client(); c.post('/posts', json={'body': 'orphan'}); "
                  "os._exit(0)")
    subprocess.run([sys.executable, "-c", committing], env=env, cwd=ROOT, check=True, timeout=60)
    assert stream(redis) == []
    starting = ("from tests.integration.adopt.host import create_app; import sys, time; "
                "app = create_app(); sys.stdout.write('made\\n'); sys.stdout.flush(); "
                "time.sleep(60)")
    process = subprocess.Popen([sys.executable, "-c", starting], cwd=ROOT, stdout=subprocess.PIPE,
                               env=dict(env, HERALD_OUTBOX_RELAY="1"))
    try:
        assert process.stdout.readline() == b"made\n"
        wait_until(lambda: len(stream(redis)) == 3, timeout=20, message="the orphaned rows")
        assert topics(redis) == ["posts.created", "timeline.refresh", "messages.new"]
    finally:
        process.kill()
        process.wait(10)
        process.stdout.close()


def test_testing_mode_sends_nothing_starts_nothing_and_records(database_url):
    """app.testing: no HERALD_URL needed, no relay thread, nothing written to the outbox;
    record() has what would have been published, at the commit, never for a rollback."""
    before = set(threading.enumerate())  # a thread of another test may end meanwhile
    app = create_app({"SQLALCHEMY_DATABASE_URI": database_url, "TESTING": True})
    herald = app.extensions["host"]["herald"]
    try:
        assert herald.outbox is not None and herald.testing
        client = app.test_client()
        with herald.record() as sent:
            client.post("/posts?fail=1", json={"body": "never"})
            assert client.post("/posts", json={"body": "hi"}).status_code == 201
            client.post("/ping", json={"body": "p"})
            with app.app_context():
                with herald.job("export", user="7") as job:
                    job.progress(40)
        assert sent.topics == ["posts.created", "timeline.refresh", "messages.new", "ops.ping",
                               "job.export.started", "job.export.progress",
                               "job.export.succeeded"]
        assert sent[0]["data"]["body"] == "hi" and sent[2]["user"] == "7"
        assert herald.outbox.relay is None and set(threading.enumerate()) - before == set()
        with app.app_context():
            assert herald.outbox.counts(app.extensions["host"]["db"].engine)["pending"] == 0
        # A page renders in tests with no key set: its token is signed with a stand-in.
        herald.user_loader(lambda: 7)
        with app.test_request_context("/"):
            html = render_template_string("{{ herald_scripts() }}")
        assert '"user": "7"' in html and '"token": "ey' in html
    finally:
        close_host(app)


def test_a_job_is_one_run_of_notifications_and_a_failure_says_why(database_url):
    app = create_app({"SQLALCHEMY_DATABASE_URI": database_url, "TESTING": True})
    herald = app.extensions["host"]["herald"]
    try:
        with app.app_context(), herald.record() as sent:
            with herald.job("reports.monthly", user="7", every=0) as job:
                job.progress(10)
                job.progress(250)  # held to 100
                job.result(rows=12)
            with pytest.raises(KeyError):
                with herald.job("export", every=3600) as failing:
                    failing.progress(5)
                    failing.progress(6)  # within `every`: not sent
                    raise KeyError("no such post")
        runs = {}
        for envelope in sent:
            runs.setdefault(envelope["correlation_id"], []).append(envelope)
        first, second = runs.values()
        assert [e["topic"] for e in first] == [
            "job.reports.monthly.started", "job.reports.monthly.progress",
            "job.reports.monthly.progress", "job.reports.monthly.succeeded"]
        assert [e["data"].get("percent") for e in first] == [None, 10, 100, 100]
        assert first[-1]["data"]["rows"] == 12 and first[-1]["severity"] == "success"
        assert all(e["user"] == "7" for e in first)
        assert [e["topic"] for e in second] == ["job.export.started", "job.export.progress",
                                                "job.export.failed"]
        assert (second[-1]["severity"], second[-1]["data"]["error_type"]) == ("error", "KeyError")
        assert "no such post" in second[-1]["body"]
    finally:
        close_host(app)


def deep(levels):
    value = 1
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def test_a_bad_field_is_refused_at_the_call_naming_it_and_nothing_is_written(database_url):
    app = create_app({"SQLALCHEMY_DATABASE_URI": database_url, "TESTING": True})
    herald = app.extensions["host"]["herald"]
    try:
        with app.app_context(), herald.record() as sent:
            for fields, field in (({"severity": "loud"}, "severity"), ({"user": ""}, "user"),
                                  ({"url": "javascript:alert(1)"}, "url"),
                                  ({"data": {"x": "y" * 20000}}, "data"),
                                  ({"data": {"n": 2**70}}, "data"),  # past 64 bits
                                  ({"data": deep(300)}, "data"),
                                  ({"data": {"a": {1: "b"}}}, "data"),  # not a string key
                                  ({"url": "http://[::1"}, "url"),  # was a ValueError
                                  ({"url": "https://x.example/a b"}, "url"),
                                  ({"colour": "red"}, "colour")):
                with pytest.raises(InvalidNotification) as refused:
                    herald.publish("ops.x", "X", **fields)
                assert refused.value.field == field and field in str(refused.value)
            with pytest.raises(InvalidNotification, match="HERALD_APP_URL"):
                herald.publish("ops.x", "X", url="/posts/7")  # no request, no HERALD_APP_URL
            app.config["HERALD_APP_URL"] = "https://app.example/base/"
            herald.publish("ops.x", "X", url="/posts/7")
            herald.publish("ops.y", "Y", user=7)  # a primary key as it is
        assert [e.get("url") for e in sent] == ["https://app.example/base/posts/7", None]
        assert sent[1]["user"] == "7"
    finally:
        close_host(app)


def test_an_app_without_flask_sqlalchemy_queues_in_a_file_of_its_instance_folder(
        live_server, redis, api_key, tmp_path):
    app = Flask("plain", instance_path=str(tmp_path / "instance"))
    app.config.update(HERALD_URL=live_server.url, HERALD_API_KEY=api_key)
    herald = Herald(app)
    try:
        with app.app_context():
            herald.publish("ops.plain", "From an app with no database")
        assert (tmp_path / "instance" / "herald-outbox.sqlite3").exists()
        wait_until(lambda: topics(redis) == ["ops.plain"], timeout=10, message="the alert")
    finally:
        herald.outbox.close()


def test_herald_client_gives_up_within_its_deadline(tmp_path):
    """A Herald that accepts connections and never answers: herald.client raises
    Unavailable (within HERALD_TIMEOUT, retries included: bench/adopt.py measures it)."""
    silent = socket.create_server(("127.0.0.1", 0))
    try:
        app = Flask("host", instance_path=str(tmp_path))
        app.config.update(HERALD_URL=f"http://127.0.0.1:{silent.getsockname()[1]}",
                          HERALD_API_KEY="hk_x", HERALD_TIMEOUT=0.5, HERALD_OUTBOX_RELAY=False)
        herald = Herald(app)
        with app.app_context(), pytest.raises(Unavailable, match="did not confirm"):
            herald.client.publish("ops.x", "X")
        herald.outbox.close()
    finally:
        silent.close()


def test_an_app_that_only_mints_tokens_gets_no_outbox_file_and_no_relay(tmp_path):
    before = set(threading.enumerate())  # a thread of another test may end meanwhile
    app = Flask("tokens", instance_path=str(tmp_path / "instance"))
    app.config.update(HERALD_URL="http://127.0.0.1:9", HERALD_JWT_SECRET="s" * 32)
    herald = Herald(app)
    herald.user_loader(lambda: "42")
    try:
        reply = app.test_client().get("/herald/token")
        assert reply.status_code == 200 and reply.get_json()["token"]
        assert not (tmp_path / "instance").exists()
        assert herald.outbox.relay is None and set(threading.enumerate()) - before == set()
    finally:
        herald.outbox.close()


def test_herald_url_is_needed_to_serve_not_to_run_a_flask_command(tmp_path):
    """flask db migrate on a developer's machine makes the app with no HERALD_URL; a
    process that serves or publishes does not start without it."""
    app = Flask("cli", instance_path=str(tmp_path))
    with pytest.raises(RuntimeError, match="HERALD_URL"):
        Herald(app)
    app = Flask("cli", instance_path=str(tmp_path))
    with click.Context(click.Command("run"), info_name="run"):
        with pytest.raises(RuntimeError, match="HERALD_URL"):
            Herald(app)  # flask run serves: it needs Herald's address
    app = Flask("cli", instance_path=str(tmp_path))
    with click.Context(click.Command("migrate")):
        herald = Herald(app)
    try:
        result = app.test_cli_runner().invoke(args=["herald", "relay", "--once"])
        assert result.exit_code != 0 and "HERALD_URL is not set" in result.output
    finally:
        herald.outbox.close()


def test_herald_set_up_before_flask_sqlalchemy_says_so_at_once(tmp_path, sqlite_url):
    """The outbox table would not be in db.metadata (migrations would never make it):
    the first request and any publish say which order to call them in."""
    from flask_sqlalchemy import SQLAlchemy
    app = Flask("order", instance_path=str(tmp_path))
    app.config.update(HERALD_URL="http://127.0.0.1:9", SQLALCHEMY_DATABASE_URI=sqlite_url,
                      HERALD_OUTBOX_RELAY=False)
    herald = Herald(app)
    SQLAlchemy().init_app(app)
    try:
        with app.test_request_context("/"), pytest.raises(RuntimeError, match="db.init_app"):
            herald.publish("ops.x", "X")
    finally:
        herald.outbox.close()
