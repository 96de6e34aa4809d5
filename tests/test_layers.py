"""The import graph runs one way: catalog and workloads -> settings -> manifests -> components
-> __main__.py, with aksray/ on top; the policy pack stands alone.

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
    "manifests": 2,
    "components": 3,
    "__main__": 4,
    "aksray": 5,
}
# Packages that import nothing of the project but themselves: the catalog is plain tables, and
# the payloads ship into Ray pods with only workloads/ beside them.
SELF_CONTAINED: Final = ("catalog", "workloads")
# Packages that run in the program's process without the Pulumi SDK.
NO_PULUMI: Final = ("catalog", "workloads", "settings", "manifests")
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
