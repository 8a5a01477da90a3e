"""Structured logs: JSON lines that carry the correlation id of the request or notification."""
import json
import logging

import requests

from app import logs


def json_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def test_a_publish_is_logged_with_its_correlation_id(live_server, api_key):
    headers = {"Authorization": f"Bearer {api_key}", "X-Correlation-ID": "req-7"}
    reply = requests.post(live_server.url + "/api/notifications", headers=headers, timeout=5,
                          json={"topic": "etl.done", "title": "t", "correlation_id": "run-42"})
    assert reply.status_code == 201
    assert reply.headers["X-Correlation-ID"] == "req-7"
    plain = requests.post(live_server.url + "/api/notifications", headers=headers, timeout=5,
                          json={"topic": "etl.done", "title": "u"})
    lines = json_lines(live_server.log_path)
    published = [line for line in lines if line["message"].startswith("published ")]
    assert [line["correlation_id"] for line in published] == ["run-42", "req-7"]
    assert published[0]["message"] == f"published {reply.json()['id']} on etl.done by publisher"
    assert {"ts", "level", "logger", "process"} <= set(published[1])
    assert plain.status_code == 201


def test_a_request_without_one_gets_a_fresh_id_and_bad_ones_are_replaced(client):
    fresh = client.get("/healthz").headers["X-Correlation-ID"]
    assert len(fresh) == 32
    forged = client.get("/healthz", headers={"X-Correlation-ID": "<script>" + "x" * 200})
    assert len(forged.headers["X-Correlation-ID"]) == 32  # replaced by a fresh one
    kept = client.get("/healthz", headers={"X-Correlation-ID": "nginx-4f2a.9"})
    assert kept.headers["X-Correlation-ID"] == "nginx-4f2a.9"


def test_formatter_output():
    record = logging.LogRecord("herald.x", logging.WARNING, __file__, 1, "hello %s", ("you",), None)
    logs.bind("corr-1")
    try:
        entry = json.loads(logs.JsonFormatter().format(record))
    finally:
        logs.bind(None)
    assert entry["message"] == "hello you" and entry["level"] == "WARNING"
    assert entry["correlation_id"] == "corr-1" and entry["logger"] == "herald.x"
