"""The import graph runs one way: catalog and workloads -> settings -> scheduling -> manifests ->
components -> __main__.py, with aksray/ on top; the policy pack stands alone. Inside aksray/ the
same holds between its rooms, lowest first: the stack-file reader, the offline run, the planner
(its model, checks and reports), the rehearsal (its rig, what it records, the invariants, the
scenarios, the run, MultiKueue) and the command line. No module imports a module that imports
it, however long the way round, and no folder holds more than 20 modules side by side.

Every module of the program is parsed (not imported) and each of its imports checked: an import
of a higher layer fails, and so does the Pulumi SDK below components/ (settings/load.py, the one
reader of the Pulumi runtime's config, excepted). Imports under `if TYPE_CHECKING:` count too:
a type-only import upward is still an upward edge.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from aksray.offline.runner import PROJECT_ROOT

# Layer of each top-level package; a module may import its own layer and those below.
LAYERS: Final = {
    "catalog": 0,
    "workloads": 0,
    "settings": 1,
    "scheduling": 2,
    "manifests": 3,
    "components": 4,
    "__main__": 5,
    "aksray": 6,
}
# Packages that import nothing of the project but themselves: the catalog is plain tables, and
# the payloads ship into Ray pods with only workloads/ beside them.
SELF_CONTAINED: Final = ("catalog", "workloads")
# Packages that run in the program's process without the Pulumi SDK.
NO_PULUMI: Final = ("catalog", "workloads", "settings", "scheduling", "manifests")
PULUMI_ALLOWED: Final = frozenset({"settings/load.py"})
PROJECT_PACKAGES: Final = frozenset(LAYERS) | {"tests", "scripts"}
MAX_MODULES_PER_FOLDER: Final = 20
MAX_PRODUCT_LINES: Final = 400
MAX_TEST_LINES: Final = 600


def _modules() -> list[Path]:
    found = [PROJECT_ROOT / "__main__.py"]
    for package in LAYERS:
        if package != "__main__":
            found += sorted((PROJECT_ROOT / package).rglob("*.py"))
    return found


def _package(path: Path) -> str:
    relative = path.relative_to(PROJECT_ROOT)
    return "__main__" if relative.parts == ("__main__.py",) else relative.parts[0]


def _imported_names(path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every absolute import, wherever it stands; `from a import b`
    gives `a` and `a.b` (b may be a module of package a)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, top-level name) of every absolute import in the module."""
    seen = set()
    for line, name in _imported_names(path):
        key = (line, name.split(".")[0])
        if key not in seen:
            seen.add(key)
            yield key


MODULES: Final = _modules()


def _name(path: Path) -> str:
    return path.relative_to(PROJECT_ROOT).as_posix()


def _module_file(name: str) -> str | None:
    """The project file an import of dotted `name` reads (the longest existing prefix), as a
    path relative to the project root; None for anything outside the project."""
    parts = name.split(".")
    if parts[0] not in LAYERS:
        return None
    for cut in range(len(parts), 0, -1):
        candidate = PROJECT_ROOT / Path(*parts[:cut])
        for file in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            if file.is_file():
                return file.relative_to(PROJECT_ROOT).as_posix()
    return None


def _edges(path: Path) -> Iterator[tuple[int, str]]:
    """(line, project file) of every import of a project module other than the module itself.
    Importing `a.b.c` also runs `a/__init__.py` and `a/b/__init__.py`; those package files
    hold only docstrings and names (checked below), so the edge that counts is the one to the
    module named."""
    own = _name(path)
    for line, name in _imported_names(path):
        found = _module_file(name)
        if found is not None and found != own:
            yield line, found


def test_every_program_module_is_checked() -> None:
    names = {_name(path) for path in MODULES}
    assert {"__main__.py", "settings/load.py", "aksray/cli/main.py", "catalog/pools.py"} <= names
    assert all(_package(path) in LAYERS for path in MODULES)


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_no_import_goes_up_a_layer(path: Path) -> None:
    own = _package(path)
    upward = [
        f"{_name(path)}:{line} imports {name} (layer {LAYERS[name]} above {own}'s {LAYERS[own]})"
        for line, name in _imports(path)
        if name in LAYERS and LAYERS[name] > LAYERS[own]
    ]
    assert upward == []


@pytest.mark.parametrize("path", [p for p in MODULES if _package(p) in SELF_CONTAINED], ids=_name)
def test_catalog_and_payloads_import_only_themselves(path: Path) -> None:
    own = _package(path)
    foreign = [
        f"{_name(path)}:{line} imports {name}"
        for line, name in _imports(path)
        if name in PROJECT_PACKAGES and name != own
    ]
    assert foreign == []


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if _package(p) in NO_PULUMI and _name(p) not in PULUMI_ALLOWED],
    ids=_name,
)
def test_nothing_below_the_components_imports_pulumi(path: Path) -> None:
    pulumi = [
        f"{_name(path)}:{line} imports {name}"
        for line, name in _imports(path)
        if name == "pulumi" or name.startswith("pulumi_")
    ]
    assert pulumi == []


def test_the_policy_pack_imports_nothing_of_the_program() -> None:
    """The pack runs in its own virtualenv (policy/requirements.txt) with only policy/."""
    own = {path.stem for path in (PROJECT_ROOT / "policy").glob("*.py")}
    foreign = [
        f"policy/{path.name}:{line} imports {name}"
        for path in sorted((PROJECT_ROOT / "policy").glob("*.py"))
        for line, name in _imports(path)
        if name in PROJECT_PACKAGES and name not in own
    ]
    assert foreign == []


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    """A test that cannot fail is a defect: the walker finds imports in any position."""
    module = tmp_path / "module.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from aksray.plan.model.plan import Plan\n"
        "def f():\n    import components.platform\n"
    )
    assert [name for _, name in _imports(module)] == ["typing", "aksray", "components"]


# The rooms of aksray/, lowest first; a module may import its own room and those below. An
# entry ending in "/" holds a folder; the most specific entry wins. Every `__main__.py` is a
# command line of its own and counts as the top room.
AKSRAY_ROOMS: Final = (
    ("base", ("__init__.py", "reference.py")),
    ("stackfile", ("stackfile/",)),
    ("offline", ("offline/",)),
    ("plan.model", ("plan/__init__.py", "plan/model/")),
    ("plan.change", ("plan/change/",)),
    ("plan.checks", ("plan/checks/",)),
    ("plan.report", ("plan/report/",)),
    ("live", ("live/",)),
    ("verify", ("verify/",)),
    ("rehearse.rig", ("rehearse/__init__.py", "rehearse/rig/")),
    ("rehearse.record", ("rehearse/record.py", "rehearse/objects.py")),
    ("rehearse.invariants", ("rehearse/invariants/",)),
    ("rehearse.observer", ("rehearse/observer.py",)),
    ("rehearse.scenarios", ("rehearse/scenarios/",)),
    ("rehearse.run", ("rehearse/stack.py", "rehearse/target.py", "rehearse/run.py",
                      "rehearse/report.py")),
    ("rehearse.change", ("rehearse/change/",)),
    ("rehearse.multikueue", ("rehearse/multikueue/",)),
    ("cli", ("cli/",)),
)  # fmt: skip
ROOM_NAMES: Final = tuple(room for room, _ in AKSRAY_ROOMS)


def _room(relative: str) -> str | None:
    """The room of a module under aksray/ (path relative to aksray/)."""
    if relative.rsplit("/", 1)[-1] == "__main__.py":
        return "cli"
    best: tuple[int, str] | None = None
    for room, entries in AKSRAY_ROOMS:
        for entry in entries:
            matches = relative == entry or (entry.endswith("/") and relative.startswith(entry))
            if matches and (best is None or len(entry) > best[0]):
                best = (len(entry), room)
    return None if best is None else best[1]


AKSRAY_FILES: Final = [p for p in MODULES if _package(p) == "aksray"]


def _in_aksray(name: str) -> str:
    return name.removeprefix("aksray/")


def test_every_aksray_module_has_a_room() -> None:
    assert [_name(p) for p in AKSRAY_FILES if _room(_in_aksray(_name(p))) is None] == []


@pytest.mark.parametrize("path", AKSRAY_FILES, ids=_name)
def test_no_aksray_import_goes_up_a_room(path: Path) -> None:
    own = _room(_in_aksray(_name(path)))
    assert own is not None
    rank = ROOM_NAMES.index(own)
    upward = []
    for line, target in _edges(path):
        if not target.startswith("aksray/"):
            continue
        theirs = _room(_in_aksray(target))
        if theirs is not None and ROOM_NAMES.index(theirs) > rank:
            upward.append(f"{_name(path)}:{line} imports {target} ({theirs} above {own})")
    assert upward == []


@pytest.mark.parametrize(
    "path",
    [p for p in AKSRAY_FILES if (_room(_in_aksray(_name(p))) or "").startswith(("plan", "rehe"))],
    ids=_name,
)
def test_planner_and_rehearsal_read_the_core_not_the_queue_builders(path: Path) -> None:
    """Quotas, borrowing and node sizes come from scheduling/, never from the Kueue or KAI
    builders (which only serialise the core); their names for labels (constants) are fine."""
    builders = ("manifests.kueue", "manifests.kai", "manifests.capacity")
    found = [
        f"{_name(path)}:{node.lineno} imports {alias.name} from {node.module}"
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.ImportFrom) and node.module in builders
        for alias in node.names
        if not alias.name.isupper()
    ]
    assert found == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _graph(paths: list[Path]) -> dict[str, set[str]]:
    return {_name(path): {target for _, target in _edges(path)} for path in paths}


def test_no_module_imports_a_module_that_imports_it() -> None:
    assert _cycles(_graph(MODULES)) == []


def test_the_cycle_finder_sees_a_long_way_round() -> None:
    graph = {"a.py": {"b.py"}, "b.py": {"c.py"}, "c.py": {"a.py"}, "d.py": {"a.py"}}
    assert _cycles(graph) == [["a.py", "b.py", "c.py"]]


@pytest.mark.parametrize(
    "path", [p for p in MODULES if p.name == "__init__.py" and _package(p) == "aksray"], ids=_name
)
def test_a_package_file_imports_nothing_of_the_project(path: Path) -> None:
    """Package files hold a docstring and names: importing a room never runs another's code."""
    assert [target for _, target in _edges(path)] == []


def _folders() -> list[Path]:
    roots = [PROJECT_ROOT / p for p in (*LAYERS, "tests", "scripts", "policy") if p != "__main__"]
    return sorted({f.parent for root in roots for f in root.rglob("*.py")})


@pytest.mark.parametrize("folder", _folders(), ids=_name)
def test_no_folder_holds_more_than_twenty_modules(folder: Path) -> None:
    modules = [p.name for p in folder.glob("*.py") if p.name not in ("__init__.py", "conftest.py")]
    assert len(modules) <= MAX_MODULES_PER_FOLDER, sorted(modules)


def _too_long(paths: list[Path], limit: int) -> list[str]:
    counted = ((p, len(p.read_text().splitlines())) for p in paths)
    return [f"{_name(p)}: {n} lines" for p, n in counted if n > limit]


def test_no_program_module_is_over_400_lines() -> None:
    # The scripts and the policy pack are code of the project too (bench_plan.py once had 417).
    tools = sorted(
        p for folder in ("scripts", "policy") for p in (PROJECT_ROOT / folder).rglob("*.py")
    )
    assert _too_long([*MODULES, *tools], MAX_PRODUCT_LINES) == []


def test_no_test_module_is_over_600_lines() -> None:
    tests = sorted((PROJECT_ROOT / "tests").rglob("*.py"))
    assert _too_long(tests, MAX_TEST_LINES) == []


def test_the_room_checker_sees_an_upward_import() -> None:
    summary = PROJECT_ROOT / "aksray" / "plan" / "report" / "summary.py"
    assert "aksray/plan/model/plan.py" in {t for _, t in _edges(summary)}
    assert _room("rehearse/__main__.py") == "cli" and _room("rehearse/run.py") == "rehearse.run"
    assert _room("plan/checks/gangs.py") == "plan.checks"
