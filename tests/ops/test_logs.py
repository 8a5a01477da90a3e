"""Structured logs: JSON lines that carry the correlation id of the request or notification;
text lines instead on a terminal (or with LOG_FORMAT=text)."""
import io
import json
import logging
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

import pytest
import requests

from app.ops import logs
from tests.support import ROOT, free_port


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


@pytest.mark.slow
def test_make_run_in_a_terminal_logs_text_and_json_when_piped(tmp_path):
    """bin/stack.py (what `make run` runs) on a pseudo-terminal: the web process's log
    lines are text; with its output going to a pipe they are JSON."""
    def run(use_tty):
        port = free_port()
        env = {k: v for k, v in os.environ.items()
               if k not in ("REDIS_URL", "SECRET_KEY", "LOG_FORMAT")}
        env.update(VAR_DIR=str(tmp_path / f"var-{use_tty}"), PORT=str(port),
                   **{name: f"tcp://127.0.0.1:{free_port()}"
                      for name in ("BRIDGE_PULL", "BRIDGE_ROUTER", "BRIDGE_XPUB")})
        if use_tty:
            main_fd, tty_fd = pty.openpty()
            process = subprocess.Popen([sys.executable, "bin/stack.py"], cwd=ROOT, env=env,
                                       stdin=subprocess.DEVNULL, stdout=tty_fd, stderr=tty_fd)
            os.close(tty_fd)
        else:
            main_fd, write_fd = os.pipe()
            process = subprocess.Popen([sys.executable, "bin/stack.py"], cwd=ROOT, env=env,
                                       stdin=subprocess.DEVNULL, stdout=write_fd,
                                       stderr=write_fd)
            os.close(write_fd)
        got, deadline = b"", time.monotonic() + 60
        try:
            while b"serving on http" not in got and time.monotonic() < deadline:
                if select.select([main_fd], [], [], 0.5)[0]:
                    try:
                        got += os.read(main_fd, 65536)
                    except OSError:
                        break
                if process.poll() is not None:
                    break
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
            os.close(main_fd)
        text = got.decode(errors="replace")
        [line] = [line for line in text.splitlines() if "serving on http" in line]
        return line

    on_terminal = run(True)
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO ", on_terminal), on_terminal
    piped = run(False)
    assert json.loads(piped)["message"].startswith("serving on http"), piped
