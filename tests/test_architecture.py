"""The code layout shows the architecture: no import circle among the project's modules, and no
module too long to read as one thing.

The import graph is built from the source with ``ast`` (nothing is imported), from imports at
module level and inside functions alike: an import moved into a function still ties the two
modules together, it only hides the circle from Python. ``from package import name`` counts as an
import of ``package`` (its ``__init__``) unless ``name`` is a submodule; importing a submodule is
not counted as importing its package's ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("scheduler_core", "dashboard", "gangsched", "bench")
MAX_LINES = 400

#: Modules still over MAX_LINES, with why they are not split yet. This list must only shrink:
#: split a module and remove it here (the test fails on an entry that is no longer too long).
TOO_LONG: set[str] = set()


def _paths() -> dict[str, Path]:
    """Module name -> file, for every module of the project's packages but migrations."""
    paths = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            paths[".".join(parts)] = path
    return paths


def _imports(name: str, is_package: bool, source: str, modules) -> list[tuple[str, int, bool]]:
    """(imported project module, line, inside a function?) for each import in ``source``."""
    package = name if is_package else name.rpartition(".")[0]

    def project_module(dotted: str) -> str | None:
        if name.startswith("bench.") and f"bench.{dotted}" in modules:
            dotted = f"bench.{dotted}"  # a bench script imports its siblings by their bare name
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - child.level + 1] + ([base] if base else []))
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in child.names
                ]
            for target in targets:
                resolved = project_module(target)
                if resolved is not None and resolved != name:
                    found.append((resolved, child.lineno, inner))
            visit(child, inner)

    visit(ast.parse(source), False)
    return found


def _graph(sources: dict[str, tuple[str, bool]]) -> tuple[dict[str, set[str]], dict[tuple[str, str], str]]:
    """The import graph of ``sources`` (module name -> (source, is a package)), and where each
    edge is written (the first import of it: line, module level or in a function)."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    where: dict[tuple[str, str], str] = {}
    for name, (source, is_package) in sources.items():
        for target, line, in_function in _imports(name, is_package, source, sources):
            graph[name].add(target)
            kind = "in a function" if in_function else "module level"
            where.setdefault((name, target), f"line {line}, {kind}")
    return graph, where


def _project_graph():
    return _graph({name: (path.read_text(), path.name == "__init__.py") for name, path in _paths().items()})


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_import_circle_among_the_project_modules():
    graph, where = _project_graph()
    report = []
    for circle in _circles(graph):
        members = set(circle)
        edges = [f"  {a} -> {b}  ({where[(a, b)]})" for a in circle for b in sorted(graph[a]) if b in members]
        report.append(" <-> ".join(circle) + "\n" + "\n".join(edges))
    assert not report, "import circles:\n" + "\n".join(report)


def test_a_circle_hidden_in_a_function_is_found():
    """The check above would pass vacuously if the graph missed lazy imports or relative ones."""
    sources = {
        "pkg": ("from .one import run\n", True),
        "pkg.one": ("from . import two\n", False),
        "pkg.two": ("import os\n\ndef later():\n    from .one import run\n", False),
        "pkg.three": ("from pkg import run\nfrom pkg.two import later\n", False),
    }
    graph, where = _graph(sources)
    assert graph == {
        "pkg": {"pkg.one"},
        "pkg.one": {"pkg.two"},
        "pkg.two": {"pkg.one"},
        "pkg.three": {"pkg", "pkg.two"},
    }
    assert where[("pkg.two", "pkg.one")] == "line 4, in a function"
    assert _circles(graph) == [["pkg.one", "pkg.two"]]


def test_the_project_graph_holds_its_imports():
    graph, where = _project_graph()
    assert "scheduler_core.declarations.workloads" in graph["scheduler_core.declarations.registry"]
    assert "dashboard.tasks" in graph["dashboard.simulation_start"]
    assert "bench.naive_scheduler" in graph["bench.engine"]
    assert any("in a function" in text for text in where.values()), "lazy imports are part of the graph"


def test_no_module_over_400_lines_but_migrations():
    lengths = {str(path.relative_to(ROOT)): len(path.read_text().splitlines()) for path in _paths().values()}
    too_long = {path: count for path, count in lengths.items() if count > MAX_LINES}
    assert set(too_long) <= TOO_LONG, f"modules over {MAX_LINES} lines: {too_long}"
    stale = sorted(TOO_LONG - set(too_long))
    assert not stale, f"no longer over {MAX_LINES} lines, remove from TOO_LONG: {stale}"


#: What may stand loose at scheduler_core's top level besides its packages: Django's app config,
#: Celery's autodiscovered tasks, the event outbox and the JSON field validators.
TOP_LEVEL_MODULES = {"__init__.py", "apps.py", "events.py", "tasks.py", "validators.py"}

#: Package -> the scheduler_core packages and modules it must never import (each package's
#: ``__init__`` says what it may import). The folders are the layers: db under models, reads
#: and snapshot over them, services over those, cluster beside services; specs (what the
#: declarations parse into and the services apply) under both.
NEVER_IMPORTS = {
    "scheduler_core.engine": {"scheduler_core"},
    "scheduler_core.db": {"scheduler_core"},
    "scheduler_core.worker": {"scheduler_core"},
    "scheduler_core.models": {
        "scheduler_core.db",
        "scheduler_core.reads",
        "scheduler_core.snapshot",
        "scheduler_core.services",
        "scheduler_core.cluster",
        "scheduler_core.tasks",
    },
    "scheduler_core.reads": {
        "scheduler_core.snapshot",
        "scheduler_core.services",
        "scheduler_core.cluster",
        "scheduler_core.declarations",
        "scheduler_core.tasks",
    },
    "scheduler_core.specs": {"scheduler_core"},
    # Pure like the engine: it runs the engine forward, nothing else of scheduler_core.
    "scheduler_core.forecast": {"scheduler_core"},
    "scheduler_core.services": {"scheduler_core.declarations", "scheduler_core.management"},
    "scheduler_core.snapshot": {
        "scheduler_core.services",
        "scheduler_core.cluster",
        "scheduler_core.declarations",
        "scheduler_core.tasks",
    },
}

#: What a package may still import of scheduler_core although the rule above forbids it.
ALLOWED_IMPORTS = {
    "scheduler_core.engine": {"scheduler_core.engine"},
    "scheduler_core.db": {"scheduler_core.db"},
    "scheduler_core.worker": {"scheduler_core.worker"},
    "scheduler_core.specs": {"scheduler_core.specs"},
    "scheduler_core.forecast": {"scheduler_core.forecast", "scheduler_core.engine"},
}


def test_scheduler_core_top_level_holds_packages_and_the_named_modules():
    loose = {path.name for path in (ROOT / "scheduler_core").glob("*.py")}
    assert loose - TOP_LEVEL_MODULES == set(), "group these into a package of scheduler_core"


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_no_package_imports_a_layer_above_it():
    graph, where = _project_graph()
    broken = []
    for package, forbidden in NEVER_IMPORTS.items():
        allowed = ALLOWED_IMPORTS.get(package, set())
        for name in sorted(graph):
            if not _within(name, package):
                continue
            for target in sorted(graph[name]):
                if any(_within(target, bad) for bad in forbidden) and not any(
                    _within(target, ok) for ok in allowed
                ):
                    broken.append(f"{name} -> {target}  ({where[(name, target)]})")
    assert broken == []


def test_the_layer_rule_sees_a_forbidden_import():
    """The check above would pass vacuously if the packages' names did not match the graph's."""
    graph, _ = _project_graph()
    assert "scheduler_core.models" in graph["scheduler_core.reads.selectors"]
    assert any(_within(name, "scheduler_core.snapshot") for name in graph["scheduler_core.services.cycle"])


def test_each_scheduler_core_package_says_what_lives_there_and_what_it_may_import():
    """A newcomer reads the package's ``__init__`` first: it names its concern and its imports."""
    silent = []
    for init in sorted((ROOT / "scheduler_core").glob("*/__init__.py")):
        if init.parent.name == "migrations":
            continue
        docstring = ast.get_docstring(ast.parse(init.read_text())) or ""
        if "import" not in docstring.lower():
            silent.append(init.parent.name)
    assert silent == []
