"""Package boundaries: the web app does not reach into the worker processes,
the client library does not reach into Herald, and settings are read in config.py."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(folder):
    """``(file, module)`` for every absolute import under ``folder``."""
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                yield from ((path, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                yield path, node.module


def test_the_app_does_not_import_the_workers():
    offenders = [f"{path.relative_to(ROOT)}: {module}" for path, module in imported_modules("app")
                 if module == "workers" or module.startswith("workers.")]
    assert offenders == []


def test_the_client_library_does_not_import_herald():
    offenders = [f"{path.relative_to(ROOT)}: {module}"
                 for path, module in imported_modules("clients/python")
                 if module.split(".")[0] in ("app", "workers", "tests")]
    assert offenders == []


def test_settings_shared_by_processes_are_read_from_the_environment_in_one_place():
    for name in ("HERALD_URL", "HISTORY_MAX", "ARCHIVE_DIR", "REDIS_URL"):
        readers = sorted({path.relative_to(ROOT).as_posix()
                          for folder in ("app", "workers") for path in (ROOT / folder).rglob("*.py")
                          if f'environ.get("{name}"' in path.read_text()
                          or f'environ["{name}"]' in path.read_text()})
        assert set(readers) <= {"app/settings.py"}, (name, readers)
