"""Structured logs from real processes: a live web process's JSON lines carry the
request's correlation id; bin/stack.py (what `make run` runs) logs text on a terminal
and JSON when piped (the formatter and its choice: tests/unit/ops/test_logs.py)."""
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

import requests

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
