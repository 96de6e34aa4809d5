"""The shipped stack files: what their opening comments promise, and nothing a Pulumi secrets
provider writes (a tracked file must not change when someone runs the engine)."""

from __future__ import annotations

import re

import pytest
import yaml

from aksray.offline.runner import stack_file
from tests.support.harness import STACKS, P


def _header(stack: str) -> str:
    """The comment lines before `config:`, as one line of prose."""
    lines = stack_file(stack).read_text().split("\nconfig:", 1)[0].splitlines()
    return " ".join(line.lstrip("# ").strip() for line in lines if line.startswith("#"))


def _workloads(stack: str) -> dict[str, dict[str, object]]:
    document = yaml.safe_load(stack_file(stack).read_text())
    found: dict[str, dict[str, object]] = document["config"].get(P + "workloads") or {}
    return found


@pytest.mark.parametrize("stack", STACKS)
def test_the_opening_comment_names_every_workload_the_stack_ships_off(stack: str) -> None:
    header = _header(stack)
    off = [name for name, entry in _workloads(stack).items() if not entry.get("enabled")]
    for name in off:
        assert re.search(rf"\b{re.escape(name)}\b[^.]*\boff\b", header), (stack, name, header)
    if off:
        assert not re.search(r"\bruns all four\b", header), header


@pytest.mark.parametrize("stack", STACKS)
def test_no_stack_file_carries_secrets_provider_state(stack: str) -> None:
    document = yaml.safe_load(stack_file(stack).read_text())
    assert set(document) == {"config"}, "encryptionsalt and friends belong to one engine's state"
