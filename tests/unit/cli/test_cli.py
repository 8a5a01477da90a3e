"""flask --app wsgi users|apikeys|notify, through Flask's CLI runner and for real."""
import os
import subprocess
import sys

import orjson
import pytest

from app.stream.keys import STREAM
from app.users import accounts
from tests.support import ROOT


def test_users_create_with_password_option(runner, redis):
    result = runner.invoke(args=["users", "create", "carol", "--admin", "--password", "pw-carol-1"])
    assert result.exit_code == 0, result.output
    assert "created admin carol" in result.output
    assert accounts.authenticate(redis, "carol", "pw-carol-1")["admin"] is True


def test_users_create_prompts_for_the_password(runner, redis):
    result = runner.invoke(args=["users", "create", "dan"], input="pw-dan-12\npw-dan-12\n")
    assert result.exit_code == 0, result.output
    assert accounts.authenticate(redis, "dan", "pw-dan-12")["admin"] is False


def test_users_create_errors_are_one_line(runner, redis):
    runner.invoke(args=["users", "create", "eve", "--password", "pw-eve-12"])
    result = runner.invoke(args=["users", "create", "eve", "--password", "pw-eve-12"])
    assert result.exit_code == 1 and "already exists" in result.output
    result = runner.invoke(args=["users", "create", "x y", "--password", "pw-eve-12"])
    assert result.exit_code == 1 and "name: " in result.output
    assert "Traceback" not in result.output


def test_users_list(runner, redis):
    assert runner.invoke(args=["users", "list"]).output.strip() == "no users"
    accounts.create_user(redis, "zoe", "pw-zoe-123")
    accounts.create_user(redis, "abe", "pw-abe-123", admin=True)
    lines = runner.invoke(args=["users", "list"]).output.splitlines()
    assert [line.split("\t")[:2] for line in lines] == [["abe", "admin"], ["zoe", "user"]]
    assert all(line.split("\t")[2].startswith("created 20") for line in lines)


def test_users_set_password_replaces_it_and_voids_old_tokens(runner, redis):
    from app.web.auth import tokens
    accounts.create_user(redis, "ivy", "pw-ivy-123")
    old_key = accounts.get_user(redis, "ivy")["token_key"]
    result = runner.invoke(args=["users", "set-password", "ivy"], input="pw-ivy-456\npw-ivy-456\n")
    assert result.exit_code == 0 and "set the password of ivy" in result.output
    assert accounts.authenticate(redis, "ivy", "pw-ivy-123") is None
    assert accounts.authenticate(redis, "ivy", "pw-ivy-456")["name"] == "ivy"
    with pytest.raises(tokens.TokenError, match="revoked"):
        tokens.check_user(accounts.get_user(redis, "ivy"), old_key)
    for args, message in ((["users", "set-password", "nobody", "--password", "pw-long-12"],
                           "there is no user 'nobody'"),
                          (["users", "set-password", "ivy", "--password", "short"],
                           "password: must be at least 8")):
        result = runner.invoke(args=args)
        assert result.exit_code == 1 and message in result.output


def test_apikeys_create_prints_a_working_key(runner, redis):
    result = runner.invoke(args=["apikeys", "create", "cron"])
    assert result.exit_code == 0, result.output
    key = result.output.strip()
    assert accounts.api_key_name(redis, key) == "cron"


def test_apikeys_list_and_revoke(runner, redis):
    key = runner.invoke(args=["apikeys", "create", "etl"]).output.strip()
    runner.invoke(args=["apikeys", "create", "cron"])
    listed = runner.invoke(args=["apikeys", "list"])
    assert listed.exit_code == 0
    assert [line.split("\t")[0] for line in listed.output.splitlines()] == ["cron", "etl"]
    assert key not in listed.output  # keys are never shown again
    revoked = runner.invoke(args=["apikeys", "revoke", "etl"])
    assert revoked.exit_code == 0 and "revoked API key etl" in revoked.output
    assert accounts.api_key_name(redis, key) is None
    again = runner.invoke(args=["apikeys", "revoke", "etl"])
    assert again.exit_code == 1 and "no API key 'etl'" in again.output
    assert "Traceback" not in again.output


def test_users_revoke_tokens(runner, redis):
    accounts.create_user(redis, "ann", "ann-password")
    before = accounts.get_user(redis, "ann")["token_key"]
    assert runner.invoke(args=["users", "revoke-tokens", "ann"]).exit_code == 0
    assert accounts.get_user(redis, "ann")["token_key"] != before
    missing = runner.invoke(args=["users", "revoke-tokens", "ghost"])
    assert missing.exit_code == 1 and "no user 'ghost'" in missing.output


def test_notify_publishes_and_prints_the_id(runner, redis):
    result = runner.invoke(args=["notify", "ops.backup", "Backup done", "--body", "42 GB",
                                 "--severity", "success", "--user", "ann",
                                 "--data", '{"gb": 42}'])
    assert result.exit_code == 0, result.output
    [(entry_id, fields)] = redis.xrange(STREAM)
    assert result.output.strip() == entry_id.decode()
    stored = orjson.loads(fields[b"envelope"])
    assert stored["body"] == "42 GB" and stored["data"] == {"gb": 42} and stored["user"] == "ann"


@pytest.mark.parametrize("user", ["42", "user:42", "alice@example.com", "Zo\u00eb M\u00fcller", "-1",
                                  "x" * 255])
def test_notify_addresses_any_user_id(runner, redis, user):
    """``--user`` is a user id, any string of 1-255 characters (docs/contract.md)."""
    result = runner.invoke(args=["notify", "ops.backup", "Backup done", "--user", user])
    assert result.exit_code == 0, result.output
    [(_entry_id, fields)] = redis.xrange(STREAM)
    assert fields[b"user"].decode() == orjson.loads(fields[b"envelope"])["user"] == user
    refused = runner.invoke(args=["notify", "ops.backup", "Backup done", "--user", "x" * 256])
    assert refused.exit_code == 1 and "user: must be a string of 1-255 characters" in refused.output


def test_notify_rejects_bad_input_and_stores_nothing(runner, redis):
    result = runner.invoke(args=["notify", "Bad Topic", "x"])
    assert result.exit_code == 1 and "topic: " in result.output
    result = runner.invoke(args=["notify", "ok", "x", "--data", "{not json"])
    assert result.exit_code == 1 and "--data: is not valid JSON" in result.output
    result = runner.invoke(args=["notify", "ok", "x", "--data", "[1]"])
    assert result.exit_code == 1 and "data: must be a JSON object" in result.output
    assert redis.xlen(STREAM) == 0


def test_notify_with_an_idempotency_key_is_stored_once(runner, redis):
    first = runner.invoke(args=["notify", "cron.backup", "Backup done", "--idempotency-key", "b-1"])
    again = runner.invoke(args=["notify", "cron.backup", "Backup done", "--idempotency-key", "b-1"])
    assert first.exit_code == again.exit_code == 0, again.output
    assert again.output == first.output and redis.xlen(STREAM) == 1
    other = runner.invoke(args=["notify", "cron.backup", "Other", "--idempotency-key", "b-1"])
    assert other.exit_code == 1 and "already used for a different notification" in other.output


def test_real_flask_command_line(redis_server, redis, tmp_path):
    """The contract's exact command, in a process of its own."""
    env = dict(os.environ, REDIS_URL=redis_server.url, VAR_DIR=str(tmp_path))
    flask = [sys.executable, "-m", "flask", "--app", "wsgi"]
    done = subprocess.run(flask + ["notify", "cli.test", "From the shell"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert redis.xrange(STREAM)[0][0].decode() == done.stdout.strip()


def stored(redis):
    return [(entry_id.decode(), orjson.loads(fields[b"envelope"]))
            for entry_id, fields in redis.xrange(STREAM)]


def test_notify_with_a_url(runner, redis):
    for url in ("https://ci.example.com/runs/42?tab=log", "/jobs"):
        result = runner.invoke(args=["notify", "ci.run", "Run 42", "--url", url])
        assert result.exit_code == 0, result.output
    assert [envelope["url"] for _, envelope in stored(redis)] == [
        "https://ci.example.com/runs/42?tab=log", "/jobs"]


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JavaScript:alert(1)",
                                 "data:text/html,x", "//evil.example.com/x", "ftp://x.example",
                                 "https://", "relative/path", ""])
def test_notify_refuses_other_urls(runner, redis, url):
    result = runner.invoke(args=["notify", "ci.run", "Run 42", "--url", url])
    assert result.exit_code == 1 and "url: must be an absolute http(s):// URL" in result.output
    assert "Traceback" not in result.output and redis.xlen(STREAM) == 0


def test_notify_stdin_publishes_every_line_in_order(runner, redis):
    lines = [{"topic": "batch.item", "title": f"item {i}", "severity": "success"}
             for i in range(250)]
    lines[3]["url"] = "/jobs"
    lines[4]["user"] = "ann"
    text = "\n".join(orjson.dumps(line).decode() for line in lines[:10]) + "\n\n  \n" + \
        "\n".join(orjson.dumps(line).decode() for line in lines[10:]) + "\n"
    result = runner.invoke(args=["notify", "--stdin"], input=text)
    assert result.exit_code == 0, result.output
    kept = stored(redis)
    assert [envelope["title"] for _, envelope in kept] == [f"item {i}" for i in range(250)]
    assert result.output.split() == [entry_id for entry_id, _ in kept]  # the ids, in order
    assert kept[3][1]["url"] == "/jobs" and kept[4][1]["user"] == "ann"


@pytest.mark.parametrize("bad_line, message", [
    ('{"topic": "Bad Topic", "title": "x"}', "line 3: topic: "),
    ('{"topic": "ok", "title": "x", "url": "javascript:alert(1)"}', "line 3: url: "),
    ('{"topic": "ok"}', "line 3: title: is required"),
    ('{"topic": "ok", "title": "x", "colour": "red"}', "line 3: colour: is not a known field"),
    ('{"topic": "ok", "title": "x", "id": "1-0"}', "line 3: id: is set by Herald"),
    ('["topic"]', "line 3: envelope: must be a JSON object"),
    ('{"topic": "ok", "title": ', "line 3: is not valid JSON"),
    # Each of these once ended in a raw traceback (issue 23).
    ('{"topic": "ok", "title": "x", "url": "http://[::1"}', "line 3: url: "),
    ('{"topic": "ok", "title": "\\ud800"}', "line 3: is not valid JSON"),
    ('{"topic": "ok", "title": "x", "data": ' + '{"d":' * 5000 + "1" + "}" * 5001,
     "line 3: is not valid JSON"),
    ('{"topic": "ok", "title": "x", "data": {"n": 1' + "0" * 30 + "}}", "line 3: holds an integer"),
    (b'{"topic": "ok", "title": "\xff"}', "line 3: is not UTF-8"),
])
def test_notify_stdin_with_one_bad_line_publishes_nothing(runner, redis, bad_line, message):
    good = b'{"topic": "batch.item", "title": "fine"}'
    bad = bad_line if isinstance(bad_line, bytes) else bad_line.encode()
    result = runner.invoke(args=["notify", "--stdin"], input=b"\n".join([good, good, bad, good]))
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), result.exception  # not a traceback
    assert message in result.output and "Traceback" not in result.output
    assert redis.xlen(STREAM) == 0


def test_notify_stdin_and_arguments_do_not_mix(runner, redis):
    result = runner.invoke(args=["notify", "ops", "x", "--stdin"], input="{}\n")
    assert result.exit_code == 1 and "not both" in result.output
    result = runner.invoke(args=["notify"])
    assert result.exit_code == 1 and "TOPIC and TITLE are required" in result.output
    empty = runner.invoke(args=["notify", "--stdin"], input="")
    assert empty.exit_code == 0 and empty.output == ""
    assert redis.xlen(STREAM) == 0


def test_real_notify_stdin(redis_server, redis, tmp_path):
    """``flask --app wsgi notify --stdin`` in a process of its own, fed by a pipe."""
    env = dict(os.environ, REDIS_URL=redis_server.url, VAR_DIR=str(tmp_path))
    lines = "".join(orjson.dumps({"topic": "cli.batch", "title": f"t{i}"}).decode() + "\n"
                    for i in range(3))
    done = subprocess.run([sys.executable, "-m", "flask", "--app", "wsgi", "notify", "--stdin"],
                          cwd=ROOT, env=env, input=lines, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [entry_id for entry_id, _ in stored(redis)]
    assert [envelope["title"] for _, envelope in stored(redis)] == ["t0", "t1", "t2"]
