"""Settings: one module reads the environment, every setting is declared there,
and the README's settings table lists exactly the declared ones.

The code is read with ``ast``: any use of the process environment
(``os.environ`` read, written or copied for a child, ``os.getenv``) anywhere
but app/settings/read.py fails; children get theirs from
``settings.child_environment``.
"""
import ast
import re

import pytest

from app import settings
from app.settings import SETTINGS, get
from tests.support import ROOT

SOURCES = ["app", "workers", "bin", "wsgi.py"]
READER = "app/settings/read.py"
SETTING = re.compile(r"[A-Z][A-Z0-9_]*\Z")


def _is_environ(node):
    return (isinstance(node, ast.Attribute) and node.attr == "environ"
            and isinstance(node.value, ast.Name) and node.value.id == "os")


def environment_uses(tree):
    """Line numbers where ``tree`` touches the process environment: ``os.environ`` in any
    way (a read, a write, a copy for a child) or ``os.getenv``/``os.putenv``."""
    for node in ast.walk(tree):
        if _is_environ(node) or (isinstance(node, ast.Attribute) and node.attr in ("getenv", "putenv")
                                 and isinstance(node.value, ast.Name) and node.value.id == "os"):
            yield node.lineno


def source_files():
    for source in SOURCES:
        path = ROOT / source
        yield from ([path] if path.is_file() else sorted(path.rglob("*.py")))


def strings_in_code():
    """Every string constant in the sources, but the declarations themselves."""
    found = set()
    for file in source_files():
        if file.relative_to(ROOT).as_posix() == "app/settings/declared.py":
            continue
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
    return found


def readme_settings():
    """The backquoted names in the first column of the README's settings table."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index("| variable | default | meaning |")
    names = set()
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        names |= set(re.findall(r"`([A-Z][A-Z0-9_]*)`", line.split("|")[1]))
    return names


def test_only_the_settings_reader_touches_the_environment():
    offenders = [f"{file.relative_to(ROOT)}:{line}" for file in source_files()
                 if file.relative_to(ROOT).as_posix() != READER
                 for line in environment_uses(ast.parse(file.read_text()))]
    assert offenders == []


def test_the_scanner_sees_every_use():
    for code in ('os.environ.get("X")', '"Y" in os.environ', "env = dict(os.environ)",
                 'os.environ["Z"] = "1"', 'os.getenv("X")'):
        assert list(environment_uses(ast.parse("import os\n" + code))), code
    assert not list(environment_uses(ast.parse("import os\nos.getpid()")))


def test_every_declared_setting_is_used():
    unused = sorted(set(SETTINGS) - strings_in_code())
    assert unused == [], f"declared in app/settings/declared.py but never read: {unused}"


def test_every_setting_is_in_the_readme_table_and_nothing_else():
    documented = readme_settings()
    assert sorted(set(SETTINGS) - documented) == [], "declared but not in README.md's table"
    assert sorted(documented - set(SETTINGS)) == [], "in README.md's table but not declared"


@pytest.mark.parametrize("name, raw, message", [
    ("PORT", "http", "herald: PORT must be a whole number from 1 to 65535, not 'http'"),
    ("PORT", "70000", "herald: PORT must be a whole number from 1 to 65535, not '70000'"),
    ("TOKEN_TTL", "an hour", "herald: TOKEN_TTL must be a whole number, not 'an hour'"),
    ("BRIDGE_BATCH", "0", "herald: BRIDGE_BATCH must be a whole number of 1 or more, not '0'"),
    ("ACCESS_LOG", "yes", "herald: ACCESS_LOG must be 1 or 0, not 'yes'"),
    ("LOG_FORMAT", "yaml", "herald: LOG_FORMAT must be json or text, not 'yaml'"),
    ("ARCHIVER_LEASE", "1", "herald: ARCHIVER_LEASE must be from 3 to 3600 seconds, not '1'"),
    ("WEBHOOK_TIMEOUT", "soon", "herald: WEBHOOK_TIMEOUT must be a number of seconds of 0 s or more"),
    ("READY_REQUIRES", "digest,mailman", "READY_REQUIRES names unknown roles ['mailman']"),
])
def test_a_bad_value_ends_the_process_naming_the_setting(name, raw, message):
    with pytest.raises(SystemExit) as exc:
        get(name, {name: raw})
    assert message in str(exc.value)


@pytest.mark.parametrize("name, raw, value", [
    ("PORT", "8080", 8080), ("ACCESS_LOG", "1", True), ("REUSE_PORT", "0", False),
    ("HEARTBEAT_INTERVAL", "0.5", 0.5), ("SOCKETIO_ORIGINS", "https://a, https://b,", ("https://a", "https://b")),
    ("READY_REQUIRES", "digest, bridge", ("digest", "bridge")), ("HOST", "", "127.0.0.1"),
    ("SESSION_COOKIE_SECURE", "", None),
])
def test_values_are_typed_and_empty_means_the_default(name, raw, value):
    assert get(name, {name: raw}) == value


def test_the_flask_config_takes_its_values_from_the_settings(monkeypatch):
    monkeypatch.setenv("TOKEN_TTL", "60")
    monkeypatch.setenv("TRUSTED_PROXIES", "1")
    config = settings.Config(SECRET_KEY="k")
    assert config.TOKEN_TTL == 60
    assert config.MAX_CONNECTIONS_PER_ADDRESS == 0  # behind a proxy every client shares its address
