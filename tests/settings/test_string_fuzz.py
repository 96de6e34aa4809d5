"""Every string the project stacks set, at every path, made empty, padded, over-long, ended by a
newline or given a non-ASCII letter: the program refuses it at that very path (or, for a letter
a name may hold, accepts it), never crashes, and registers nothing when it refuses."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import run_program
from tests.support.harness import P, stack_document, write_stack

Path_ = tuple[str | int, ...]


def _string_paths(node: Any, path: Path_ = ()) -> Iterator[Path_]:
    if isinstance(node, str):
        yield path
    elif isinstance(node, dict) and "secure" not in node:
        for key, value in node.items():
            yield from _string_paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _string_paths(value, (*path, index))


def _config_path(path: Path_) -> str:
    """The path an error names: `cluster.gpuPools[0].name` for the YAML keys that hold it."""
    head, *rest = path
    text = str(head).removeprefix(P)
    for part in rest:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


_CASES = [
    (stack, path)
    for stack in ("dev", "prod")
    for path in _string_paths(stack_document(stack)["config"])
]
_MUTATIONS: dict[str, Callable[[str], str]] = {
    "empty": lambda value: "",
    "padded": lambda value: f" {value} ",
    "newline": lambda value: f"{value}\n",
    "over-long": lambda value: value + "x" * 1000,
}


def _with(stack: str, path: Path_, value: str) -> dict[str, Any]:
    document = copy.deepcopy(stack_document(stack))
    node = document["config"]
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return document


def test_the_stacks_have_strings_at_many_paths() -> None:
    assert len(_CASES) >= 50


@pytest.mark.parametrize("mutation", sorted(_MUTATIONS))
def test_a_broken_string_is_refused_at_its_path(tmp_path: Path, mutation: str) -> None:
    missed = []
    for stack, path in _CASES:
        value = _MUTATIONS[mutation](str(_lookup(stack, path)))
        result = run_program(write_stack(tmp_path, _with(stack, path, value)))
        where = _config_path(path)
        if result.ok or not any(p.path == where for p in result.problems) or result.resources:
            missed.append(f"{stack}: {where} = {value[:30]!r}: {result.problems[:2]}")
    assert missed == [], "\n".join(missed)


def test_a_non_ascii_letter_is_refused_at_its_path_or_accepted(tmp_path: Path) -> None:
    wrong = []
    for stack, path in _CASES:
        value = f"{_lookup(stack, path)}é"
        result = run_program(write_stack(tmp_path, _with(stack, path, value)))
        where = _config_path(path)
        if not result.ok and not any(p.path == where for p in result.problems):
            wrong.append(f"{stack}: {where}: {result.problems[:2]}")
    assert wrong == [], "\n".join(wrong)


def _lookup(stack: str, path: Path_) -> Any:
    node: Any = stack_document(stack)["config"]
    for part in path:
        node = node[part]
    return node
