"""Structured logs: JSON lines that carry the correlation id of the request or notification;
text lines instead on a terminal (or with LOG_FORMAT=text)."""
import io
import json
import logging
import os
import re
import select

import pytest

from app.ops import logs


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


# -- the format: text on a terminal, JSON elsewhere, LOG_FORMAT forces -------------------

TEXT_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} WARNING herald\.test: hello\n")


@pytest.fixture
def terminal():
    """A real pseudo-terminal: (a file writing to it, a function reading what it got)."""
    main_fd, tty_fd = os.openpty()
    stream = os.fdopen(tty_fd, "w", buffering=1)

    def written():
        stream.flush()
        got = b""
        while select.select([main_fd], [], [], 0.2)[0]:
            got += os.read(main_fd, 65536)
        return got.decode().replace("\r\n", "\n")
    try:
        yield stream, written
    finally:
        stream.close()
        os.close(main_fd)


@pytest.fixture
def restore_logging():
    yield
    logs.configure()  # back to stderr, as every test expects


def emit(stream):
    logs.configure(stream=stream)
    logging.getLogger("herald.test").warning("hello")


def test_unset_it_is_text_on_a_terminal(monkeypatch, terminal, restore_logging):
    monkeypatch.delenv("LOG_FORMAT", raising=False)
    stream, written = terminal
    assert stream.isatty()
    emit(stream)
    assert TEXT_LINE.fullmatch(written())


def test_unset_it_is_json_elsewhere(monkeypatch, restore_logging):
    monkeypatch.delenv("LOG_FORMAT", raising=False)
    stream = io.StringIO()
    emit(stream)
    entry = json.loads(stream.getvalue())
    assert entry["message"] == "hello" and entry["logger"] == "herald.test"


def test_log_format_forces_either(monkeypatch, terminal, restore_logging):
    stream, written = terminal
    monkeypatch.setenv("LOG_FORMAT", "json")
    emit(stream)
    assert json.loads(written())["message"] == "hello"
    monkeypatch.setenv("LOG_FORMAT", "text")
    piped = io.StringIO()
    emit(piped)
    assert TEXT_LINE.fullmatch(piped.getvalue())


def test_a_bad_log_format_is_one_clear_line(monkeypatch):
    monkeypatch.setenv("LOG_FORMAT", "yaml")
    with pytest.raises(SystemExit, match="LOG_FORMAT must be json or text, not 'yaml'"):
        logs.choose_format(io.StringIO())


def test_by_default_it_follows_stderr_at_the_time(monkeypatch, capsys, restore_logging):
    monkeypatch.delenv("LOG_FORMAT", raising=False)
    logs.configure()
    logging.getLogger("herald.test").warning("hello")
    assert json.loads(capsys.readouterr().err)["message"] == "hello"  # captured: not a tty
