"""Package boundaries: the web app does not reach into the worker processes,
the client library does not reach into Herald, no module imports itself back
through others, app/ shows its rooms, and a module holds one responsibility.

300 lines is a guideline, not a count to split at: a module past it holds one
responsibility, named in LONGER (a review reads that list), and none passes
CEILING, past which a module surely holds two."""
import ast

import pytest

from tests.support import ROOT


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


def _modules():
    """``{module name: (path, is a package)}`` of app/ and workers/."""
    found = {}
    for path in sorted([*(ROOT / "app").rglob("*.py"), *(ROOT / "workers").rglob("*.py")]):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def import_graph():
    """``{module: modules it imports}``, at any depth of the file (a lazy import
    inside a function is an import too). Importing ``a.b.c`` imports the packages
    ``a`` and ``a.b`` as well, unless the importer is inside them already."""
    modules = _modules()
    graph = {}
    for name, (path, package) in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = name.split(".") if package else name.split(".")[:-1]
                    here = here[:len(here) - node.level + 1]
                    base = ".".join(here + ([node.module] if node.module else []))
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    targets.add(full if full in modules else base)
        edges = set()
        for target in targets & set(modules):
            parts = target.split(".")
            for depth in range(1, len(parts) + 1):
                ancestor = ".".join(parts[:depth])
                if ancestor in modules and ancestor != name and not name.startswith(ancestor + "."):
                    edges.add(ancestor)
        graph[name] = edges
    return graph


def import_loops(graph):
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, loops = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                loops.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return loops


def test_no_import_loops():
    assert import_loops(import_graph()) == []


def test_the_loop_finder_finds_a_loop():
    assert import_loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_app_package_shows_its_rooms():
    entries = sorted(p.name for p in (ROOT / "app").iterdir() if p.name != "__pycache__")
    assert len(entries) <= 15, entries


GUIDELINE, CEILING = 300, 450
# The modules longer than the guideline, each with the one thing it does.
LONGER = {
    "static/js/collections/notifications.js":
        "one view of the feed kept true to the server: what it loads, what joins it live "
        "(and which of that is news), and the read, archive and snooze state it shows",
}


@pytest.mark.parametrize("folder, pattern", [("app", "*.py"), ("workers", "*.py"),
                                             ("static/js", "*.js")])
def test_a_module_past_the_guideline_says_its_one_responsibility(folder, pattern):
    lengths = {str(p.relative_to(ROOT)): len(p.read_text().splitlines())
               for p in (ROOT / folder).rglob(pattern)}
    unnamed = {name: n for name, n in lengths.items() if n > GUIDELINE and name not in LONGER}
    assert unnamed == {}, "split it by responsibility, or name the one it holds in LONGER"
    assert {name: n for name, n in lengths.items() if n > CEILING} == {}


def test_the_longer_list_names_only_modules_past_the_guideline():
    short = [name for name in LONGER
             if not (ROOT / name).exists() or len((ROOT / name).read_text().splitlines()) <= GUIDELINE]
    assert short == []


def test_stream_keys_import_nothing():
    tree = ast.parse((ROOT / "app" / "stream" / "keys.py").read_text())
    assert [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))] == []
