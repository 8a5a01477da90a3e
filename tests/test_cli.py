"""flask --app wsgi users|apikeys|notify, through Flask's CLI runner and for real."""
import os
import subprocess
import sys

import orjson
import pytest

from app import accounts
from app.bus import STREAM
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
    from app.auth import tokens
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
