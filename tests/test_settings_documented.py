"""The README's settings table lists every setting the code reads from the environment,
and nothing the code does not read.

The code is read with ``ast``: ``os.environ.get("X")``, ``os.getenv("X")``,
``os.environ["X"]``, ``"X" in os.environ``, and calls of a module's own helpers
that read the environment by the name they are given (``_int("X", 5)`` in
app/settings.py, ``env("X")`` where ``env = os.environ.get``).
"""
import ast
import re

from tests.support import ROOT

SOURCES = ["app", "workers", "bin", "wsgi.py"]
SETTING = re.compile(r"[A-Z][A-Z0-9_]*\Z")


def _is_environ(node):
    """``os.environ`` (or ``environ`` imported from os)."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ"
            and isinstance(node.value, ast.Name) and node.value.id == "os")


def _is_env_reader(func):
    """``os.environ.get`` or ``os.getenv``."""
    return isinstance(func, ast.Attribute) and (
        (func.attr == "get" and _is_environ(func.value))
        or (func.attr == "getenv" and isinstance(func.value, ast.Name) and func.value.id == "os"))


def _name(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and SETTING.match(node.value):
        return node.value
    return None


def env_readers(tree):
    """The functions of a module that read the environment by the name they are given
    (their first argument), and the local names bound to ``os.environ.get``."""
    readers = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_env_reader(node.value):
            readers |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        if isinstance(node, ast.FunctionDef) and node.args.args:
            param = node.args.args[0].arg
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call) and _is_env_reader(inner.func) and inner.args \
                        and isinstance(inner.args[0], ast.Name) and inner.args[0].id == param:
                    readers.add(node.name)
    return readers


def settings_read(tree, readers=frozenset()):
    """The setting names a module reads from the environment; ``readers``: helpers
    defined elsewhere that read it (``seconds("X", …)`` from app/settings.py)."""
    readers = set(readers) | env_readers(tree)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            if _is_env_reader(func) or (isinstance(func, ast.Name) and func.id in readers):
                found.add(_name(node.args[0]))
        elif isinstance(node, ast.Subscript) and _is_environ(node.value):
            found.add(_name(node.slice))
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            found.add(_name(node.left))
    return found - {None}


def code_settings():
    trees = {}
    for source in SOURCES:
        path = ROOT / source
        for file in ([path] if path.is_file() else sorted(path.rglob("*.py"))):
            trees[file] = ast.parse(file.read_text(), str(file))
    shared = set().union(*(env_readers(tree) for tree in trees.values()))  # helpers imported elsewhere
    found = {}
    for file, tree in trees.items():
        for name in settings_read(tree, shared):
            found.setdefault(name, file.relative_to(ROOT))
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


def test_the_scanner_finds_settings_of_every_kind():
    found = code_settings()
    # os.environ.get, a config helper (_int), the bridge's env alias and _flag, workers, bin.
    # And a helper of app/settings.py imported by another module (seconds).
    for name in ("REDIS_URL", "TOKEN_TTL", "BRIDGE_PULL", "BRIDGE_TRUST_LOCAL", "LOG_FORMAT",
                 "SMTP_URL", "WEB_PROCESSES", "SPARK_MASTER", "ACCESS_LOG", "HEARTBEAT_INTERVAL",
                 "ARCHIVER_LEASE", "DIGEST_CLAIM_IDLE", "WEBHOOK_LEASE"):
        assert name in found, name
    # A WSGI environ is not the process environment.
    assert "QUERY_STRING" not in found and "HTTP_UPGRADE" not in found


def test_every_setting_the_code_reads_is_in_the_readme_table():
    documented = readme_settings()
    missing = {name: str(where) for name, where in code_settings().items()
               if name not in documented}
    assert not missing, f"settings read but not in README.md's table: {missing}"


def test_the_readme_table_lists_nothing_the_code_does_not_read():
    stale = readme_settings() - set(code_settings())
    assert not stale, f"in README.md's table but read nowhere: {sorted(stale)}"
