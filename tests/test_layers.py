"""The import graph runs one way: catalog and workloads -> settings -> scheduling -> manifests ->
components -> __main__.py, with aksray/ on top; the policy pack stands alone. Inside aksray/ the
same holds between its sub-layers: the runner (the program under mocks), the planner (what a run
means: the plan model and its checks), the presenters (what a person reads) and the rehearsal.

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

from aksray.runner import PROJECT_ROOT

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


def _modules() -> list[Path]:
    found = [PROJECT_ROOT / "__main__.py"]
    for package in LAYERS:
        if package != "__main__":
            found += sorted((PROJECT_ROOT / package).rglob("*.py"))
    return found


def _package(path: Path) -> str:
    relative = path.relative_to(PROJECT_ROOT)
    return "__main__" if relative.parts == ("__main__.py",) else relative.parts[0]


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, top-level name) of every absolute import in the module, wherever it stands."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]


MODULES: Final = _modules()


def _name(path: Path) -> str:
    return path.relative_to(PROJECT_ROOT).as_posix()


def test_every_program_module_is_checked() -> None:
    names = {_name(path) for path in MODULES}
    assert {"__main__.py", "settings/load.py", "aksray/cli.py", "catalog/pools.py"} <= names
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
        "if TYPE_CHECKING:\n    from aksray.model import Plan\n"
        "def f():\n    import components.platform\n"
    )
    assert [name for _, name in _imports(module)] == ["typing", "aksray", "components"]


# Sub-layers of aksray/, lowest first: the runner (the program under mocks, the stack file, exit
# codes), the planner (what a run means: the plan model and its checks), the presenters (what a
# person reads), the rehearsal (the stack on real controllers), and the command line on top.
AKSRAY_SUBLAYERS: Final = ("runner", "planner", "presenters", "rehearse", "cli")
AKSRAY_MODULES: Final = {
    "runner": (
        "__init__.py", "runner.py", "mocks.py", "sdk_private.py", "stackfile.py",
        "stackyaml.py", "reference.py", "usage.py", "cliscalars.py", "stackvalues.py",
    ),
    "planner": (
        "model.py", "objects.py", "checks/", "demand.py", "graph.py", "cost.py", "monitoring.py",
        "preflight.py", "multikueue_plan.py",
    ),
    "presenters": (
        "report.py", "markdown.py", "mermaid.py", "tables.py", "tree.py", "render.py",
        "folding.py", "departments.py", "cluster_summary.py", "storage_summary.py",
        "multikueue_report.py", "multikueue_render.py",
    ),
    "rehearse": ("rehearse/",),
    "cli": ("cli.py", "cli_parser.py", "rehearse/__main__.py", "multikueue_cli.py"),
}  # fmt: skip


def _sublayer(relative: str) -> str | None:
    """The sub-layer of a module under aksray/ (path relative to aksray/); the most specific
    entry wins (`rehearse/__main__.py` is the command line, the rest of rehearse/ is not)."""
    best: tuple[int, str] | None = None
    for layer, entries in AKSRAY_MODULES.items():
        for entry in entries:
            matches = relative == entry or (entry.endswith("/") and relative.startswith(entry))
            if matches and (best is None or len(entry) > best[0]):
                best = (len(entry), layer)
    return None if best is None else best[1]


def _module_file(name: str) -> str | None:
    """The file under aksray/ that an import of `name` reads (the longest existing prefix)."""
    parts = name.split(".")
    for cut in range(len(parts), 1, -1):
        candidate = PROJECT_ROOT / Path(*parts[:cut])
        for file in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            if file.is_file():
                return file.relative_to(PROJECT_ROOT / "aksray").as_posix()
    return None


def _aksray_imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module path relative to aksray/) of every import of an aksray module."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            found = _module_file(name) if name.startswith("aksray.") else None
            if found is not None:
                yield node.lineno, found


AKSRAY_FILES: Final = [p for p in MODULES if _package(p) == "aksray"]


def _in_aksray(path: Path) -> str:
    return path.relative_to(PROJECT_ROOT / "aksray").as_posix()


def test_every_aksray_module_has_a_sublayer() -> None:
    assert [_name(p) for p in AKSRAY_FILES if _sublayer(_in_aksray(p)) is None] == []


@pytest.mark.parametrize("path", AKSRAY_FILES, ids=_name)
def test_no_aksray_import_goes_up_a_sublayer(path: Path) -> None:
    own = _sublayer(_in_aksray(path))
    assert own is not None
    rank = AKSRAY_SUBLAYERS.index(own)
    upward = []
    for line, target in _aksray_imports(path):
        theirs = _sublayer(target)
        if theirs is not None and AKSRAY_SUBLAYERS.index(theirs) > rank:
            upward.append(f"{_name(path)}:{line} imports aksray/{target} ({theirs} above {own})")
    assert upward == []


@pytest.mark.parametrize(
    "path",
    [p for p in AKSRAY_FILES if _sublayer(_in_aksray(p)) in ("planner", "rehearse")],
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


def test_the_sublayer_checker_sees_an_upward_import() -> None:
    report = PROJECT_ROOT / "aksray" / "report.py"
    assert ("model.py" in {t for _, t in _aksray_imports(report)}) is True
    assert _sublayer("rehearse/__main__.py") == "cli" and _sublayer("rehearse/run.py") == "rehearse"
    assert _sublayer("checks/gangs.py") == "planner"
