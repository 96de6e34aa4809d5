"""The plan and render outputs of dev, prod and local, byte for byte (`make golden` updates)."""

from __future__ import annotations

import difflib

import pytest

from tests.support.golden import STACKS, outputs, stored


@pytest.mark.parametrize("stack", STACKS)
def test_outputs_are_the_golden_copies(stack: str) -> None:
    now, golden = outputs(stack), stored(stack)
    assert sorted(now) == sorted(golden), "files added or gone: run make golden"
    for name, content in now.items():
        if content != golden[name]:
            diff = difflib.unified_diff(
                golden[name].decode().splitlines(), content.decode().splitlines(),
                f"golden/{stack}/{name}", "now", lineterm="", n=2,
            )  # fmt: skip
            pytest.fail("\n".join(list(diff)[:40]) + "\n(run make golden if intended)")
