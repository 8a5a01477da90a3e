"""The project's .env (app/settings/read.py: load_env_file), which make run, make example
and bin/flask read: one's own settings written once, the shell's own still winning."""
import pytest

from app import settings
from app.settings import read


@pytest.fixture
def env_file(tmp_path, monkeypatch):
    path = tmp_path / ".env"
    monkeypatch.setenv("ENV_FILE", str(path))
    for name in ("VAR_DIR", "PORT", "EXAMPLE_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(read, "FROM_ENV_FILE", set())
    yield path
    for name in read.FROM_ENV_FILE:  # what load_env_file set, monkeypatch does not know
        monkeypatch.delenv(name, raising=False)


def test_settings_written_once_in_dot_env_are_read(env_file, tmp_path, monkeypatch):
    env_file.write_text(f"# mine\nVAR_DIR={tmp_path / 'mine'}\nexport EXAMPLE_PORT='5101'\n")
    monkeypatch.setenv("PORT", "5100")
    assert settings.load_env_file() == env_file
    assert settings.var_dir() == tmp_path / "mine"
    assert settings.get("EXAMPLE_PORT") == 5101
    # Read from .env is not "given in the shell": make example may move it when taken.
    assert not settings.is_set("VAR_DIR") and not settings.is_set("EXAMPLE_PORT")
    assert settings.is_set("PORT")


def test_the_shell_wins_over_dot_env(env_file, monkeypatch):
    env_file.write_text("PORT=5100\n")
    monkeypatch.setenv("PORT", "6000")
    settings.load_env_file()
    assert settings.get("PORT") == 6000
    assert settings.is_set("PORT")


def test_no_dot_env_is_no_change(env_file):
    assert settings.load_env_file() is None
    assert settings.get("PORT") == 5000
    assert not settings.is_set("PORT")


def test_the_default_dot_env_is_decided_in_one_place():
    """bin/flask reads the file load_env_file reads (ENV_FILE, else the checkout's .env,
    app/settings/read.py: env_file): it names no path of its own, and does not hand one
    to Flask's --env-file, so the two cannot drift apart."""
    script = (read.ROOT / "bin" / "flask").read_text()
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    assert ".env" not in code and "ENV_FILE" not in code
    assert "load_env_file()" in code
