"""flask --app wsgi digest list | preview ID | send-now ID."""
from app.digests import store
from app.digests.collect import Collector
from app.stream.publish import Bus
from app.users import accounts


def collect_all(redis):
    collector = Collector(redis)
    while collector.step(block_ms=10):
        pass


def test_list_preview_send_now(runner, redis, smtp_server, monkeypatch):
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    record = store.create(redis, "ada", {"email": "ops@example.com", "topics": ["ops"],
                                         "schedule": "daily@09:00", "timezone": "Europe/Paris"})
    listed = runner.invoke(args=["digest", "list"])
    assert listed.exit_code == 0 and record["id"] in listed.output and "ops@example.com" in listed.output

    nothing = runner.invoke(args=["digest", "preview", record["id"]])
    assert nothing.exit_code == 0 and "nothing collected yet" in nothing.output

    Bus(redis).publish("ops.db", "Disk almost full", severity="warning")
    collect_all(redis)
    shown = runner.invoke(args=["digest", "preview", record["id"]])
    assert shown.exit_code == 0
    assert "Subject: Herald digest: 1 notification until" in shown.output
    assert "[warning]" in shown.output and "Disk almost full" in shown.output

    monkeypatch.delenv("SMTP_URL", raising=False)
    refused = runner.invoke(args=["digest", "send-now", record["id"]])
    assert refused.exit_code == 1 and "SMTP_URL is not set" in refused.output
    monkeypatch.setenv("SMTP_URL", smtp_server.url)
    sent = runner.invoke(args=["digest", "send-now", record["id"]])
    assert sent.exit_code == 0 and "sent 1 digest email(s) to ops@example.com" in sent.output
    [message] = smtp_server.messages
    assert message["Subject"].startswith("Herald digest: 1 notification")
    again = runner.invoke(args=["digest", "send-now", record["id"]])
    assert "nothing collected yet" in again.output and len(smtp_server.messages) == 1

    assert runner.invoke(args=["digest", "preview", "nope"]).exit_code == 1
