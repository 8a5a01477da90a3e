"""``flask webhooks create|list|delete|retry`` on the real Redis."""
from app.webhooks import store


def test_create_list_delete(runner, redis, allow_loopback):
    made = runner.invoke(args=["webhooks", "create", "http://127.0.0.1:9/hook", "--topic", "ops",
                               "--topic", "spark", "--min-severity", "warning", "--private"])
    assert made.exit_code == 0, made.output
    [record] = store.list_all(redis)
    assert (record["url"], record["topics"], record["min_severity"], record["private"]) == (
        "http://127.0.0.1:9/hook", ["ops", "spark"], "warning", True)
    assert f"created webhook {record['id']}" in made.output
    assert f"secret (shown only this once): {record['secret']}" in made.output

    listed = runner.invoke(args=["webhooks", "list"])
    assert listed.exit_code == 0
    assert record["id"] in listed.output and "ops,spark" in listed.output
    assert "private" in listed.output and record["secret"] not in listed.output

    assert runner.invoke(args=["webhooks", "retry", record["id"]]).output == \
        "requeued 0 parked deliveries\n"
    deleted = runner.invoke(args=["webhooks", "delete", record["id"]])
    assert deleted.exit_code == 0 and store.list_all(redis) == []
    again = runner.invoke(args=["webhooks", "delete", record["id"]])
    assert again.exit_code == 1 and "no webhook" in again.output


def test_refusals_are_one_line(runner, redis, monkeypatch):
    refused = runner.invoke(args=["webhooks", "create", "http://127.0.0.1:9/", "--topic", "ops"])
    assert refused.exit_code == 1
    assert "Error: url: 127.0.0.1 resolves to 127.0.0.1, a loopback address" in refused.output
    monkeypatch.setenv("WEBHOOK_ALLOW", "127.0.0.0/8")
    bad = runner.invoke(args=["webhooks", "create", "http://127.0.0.1:9/", "--topic", "Bad Topic"])
    assert bad.exit_code == 1 and "Error: topics[0]:" in bad.output
    assert "Traceback" not in refused.output + bad.output
    assert store.list_all(redis) == []


def test_rotate(runner, redis, allow_loopback):
    runner.invoke(args=["webhooks", "create", "http://127.0.0.1:9/hook", "--topic", "ops"])
    [record] = store.list_all(redis)
    rotated = runner.invoke(args=["webhooks", "rotate", record["id"], "--overlap", "3600"])
    assert rotated.exit_code == 0, rotated.output
    now = store.get(redis, record["id"])
    assert f"new secret (shown only this once): {now['secret']}" in rotated.output
    assert "the old secret signs too until" in rotated.output
    assert (now["previous_secret"], now["secret"] != record["secret"]) == (record["secret"], True)
    refused = runner.invoke(args=["webhooks", "rotate", record["id"], "--secret", "short"])
    assert refused.exit_code == 1 and refused.output.count("\n") == 1 and "secret:" in refused.output
    assert runner.invoke(args=["webhooks", "rotate", "nope"]).exit_code == 1
