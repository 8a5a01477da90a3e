"""The first ten minutes, as the README tells them (issue 38): run for real.

- ``bin/flask`` is the checkout's own flask on Herald's app, from any
  directory, with the settings of the project's ``.env`` (``VAR_DIR`` and
  ``REDIS_URL`` written once there, nothing on the command line);
- ``make example`` (bin/example.py) beside a running ``make run`` that uses
  the same ``.env``: it takes its own ``VAR_DIR``, web port, example port and
  bridge ports, says which, and both stacks answer.

The tests point ``ENV_FILE`` at a ``.env`` of their own: the checkout's is
the developer's.
"""
import os
import re
import socket
import subprocess

import pytest
import requests

from app.users import accounts
from tests.integration.test_stack import bridge_endpoints
from tests.support import ROOT, Supervised, free_port, wait_until

SETTINGS_OF_THE_SHELL = ("REDIS_URL", "SECRET_KEY", "VAR_DIR", "PORT", "EXAMPLE_PORT",
                         "BRIDGE_PULL", "BRIDGE_XPUB", "BRIDGE_ROUTER", "FLASK_APP", "ENV_FILE")


def shell(env_file, **env):
    """The environment of a new shell: none of Herald's places set, ``ENV_FILE`` given."""
    kept = {k: v for k, v in os.environ.items() if k not in SETTINGS_OF_THE_SHELL}
    return dict(kept, ENV_FILE=str(env_file), PYTHONUNBUFFERED="1", **env)


def write_env(path, **settings):
    path.write_text("# my Herald\n" + "".join(f"{k}={v}\n" for k, v in settings.items()))
    return path


def test_bin_flask_runs_herald_commands_from_anywhere_with_the_settings_of_dot_env(
        redis_server, redis, tmp_path):
    accounts.create_user(redis, "alice", "alice-password")
    env_file = write_env(tmp_path / ".env", REDIS_URL=redis_server.url, VAR_DIR=tmp_path / "var")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # A flask of another project first on the PATH, and its FLASK_APP: neither is used.
    (elsewhere / "flask").write_text("#!/bin/sh\necho 'not Herald'\nexit 3\n")
    (elsewhere / "flask").chmod(0o755)
    env = shell(env_file, PATH=f"{elsewhere}:{os.environ['PATH']}", FLASK_APP="other_app")

    made = subprocess.run([str(ROOT / "bin" / "flask"), "users", "create", "bob", "--password",
                           "bob-password-1"], cwd=elsewhere, env=env, capture_output=True,
                          text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    listed = subprocess.run([str(ROOT / "bin" / "flask"), "users", "list"], cwd=elsewhere,
                            env=env, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert {"alice", "bob"} <= set(re.findall(r"^(\w+)", listed.stdout, re.M))
    assert accounts.authenticate(redis, "bob", "bob-password-1")


def answers(url):
    def check():
        try:
            return requests.get(url, timeout=2).status_code == 200
        except requests.RequestException:
            return False
    return check


@pytest.fixture
def taken_port():
    """A port something else listens on (the example's default, taken)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_make_example_beside_make_run_finds_free_places_itself(tmp_path, taken_port):
    var = tmp_path / "var"
    bridge = bridge_endpoints()
    port = free_port()
    env_file = write_env(tmp_path / ".env", VAR_DIR=var, PORT=port, EXAMPLE_PORT=taken_port,
                         **bridge)
    run = Supervised("bin/stack.py", shell(env_file))
    example = None
    try:
        run.said(rf"Herald is at http://127\.0\.0\.1:{port}/")
        wait_until(answers(f"http://127.0.0.1:{port}/healthz"), timeout=30, message="make run")

        example = Supervised("bin/example.py", shell(env_file))
        herald_url = example.said(r"Herald is at (http://127\.0\.0\.1:\d+)/").group(1)
        board_url = example.said(r"the example board is at (http://127\.0\.0\.1:\d+)/").group(1)
        out = example.output()
        assert herald_url != f"http://127.0.0.1:{port}"
        assert board_url != f"http://127.0.0.1:{taken_port}"
        assert f"port {port} is taken: PORT=" in out
        assert f"port {taken_port} is taken: EXAMPLE_PORT=" in out
        for name, endpoint in bridge.items():
            assert f"{endpoint} is taken: {name}=tcp://127.0.0.1:" in out
        assert f"the example's Herald keeps its state in {var / 'example-stack'}" in out

        wait_until(answers(herald_url + "/healthz"), timeout=30, message="the example's Herald")
        wait_until(answers(board_url + "/login"), timeout=30, message="the example board")
        assert answers(f"http://127.0.0.1:{port}/healthz")()  # make run's, still there
        assert (var / "example-stack" / "redis" / "redis.sock").exists()  # a Redis of its own
        assert "Traceback" not in example.output() + run.output()
    finally:
        codes = [example.stop() if example else 0, run.stop()]
    assert codes == [0, 0]
    assert not answers(f"http://127.0.0.1:{port}/healthz")()
