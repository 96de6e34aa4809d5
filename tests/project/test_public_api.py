"""The deploy path (`pulumi up` running __main__.py) uses only Pulumi's public API: an SDK
upgrade may move what a module does not export, and nothing but the offline runner's one module
of internals (aksray/offline/sdk_private.py, with its own checks) may depend on that."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from aksray.offline.runner import PROJECT_ROOT

DEPLOY_PATH = sorted(
    [
        PROJECT_ROOT / "__main__.py",
        *(
            path
            for layer in ("catalog", "settings", "scheduling", "manifests", "components")
            for path in (PROJECT_ROOT / layer).rglob("*.py")
        ),
    ]
)


def _exported(module_name: str) -> set[str] | None:
    """What a Pulumi module publishes: its `__all__` (None where it declares none)."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    return set(names) if names is not None else None


def _private_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pulumi."):
            exported = _exported(node.module or "")
            for alias in node.names:
                private = alias.name.startswith("_") or (
                    exported is not None
                    and alias.name not in exported
                    and not _is_module(f"{node.module}.{alias.name}", exported)
                )
                if private:
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module == "pulumi":
            found.extend(
                f"line {node.lineno}: from pulumi import {alias.name}"
                for alias in node.names
                if alias.name.startswith("_")
            )
        elif isinstance(node, ast.Attribute) and node.attr.isupper() and _on_pulumi(node.value):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def _is_module(name: str, exported: set[str]) -> bool:
    """A submodule imported by name is public only where its package exports it."""
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return name.rsplit(".", 1)[1] in exported


def _on_pulumi(node: ast.expr) -> bool:
    text = ast.unparse(node)
    return text.startswith("pulumi.") or text.endswith("runtime_config")


@pytest.mark.parametrize("path", DEPLOY_PATH, ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_the_deploy_path_uses_only_pulumis_public_api(path: Path) -> None:
    assert _private_uses(path) == []


def test_the_check_finds_a_private_name(tmp_path: Path) -> None:
    program = tmp_path / "program.py"
    program.write_text(
        "from pulumi.runtime import config as runtime_config\nkeys = runtime_config.CONFIG.get()\n"
    )
    assert _private_uses(program) == [
        "line 1: from pulumi.runtime import config",
        "line 2: runtime_config.CONFIG",
    ]
