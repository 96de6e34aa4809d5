"""Tests for compare_change.py: reading `pulumi preview --json`, the offline side of each change,
and the lines a difference prints (the preview itself runs in scripts/engine/e2e.sh)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import yaml

sys.path.insert(0, os.path.dirname(__file__))
import compare_change

from aksray.offline.runner import stack_file

URN = "urn:pulumi:local::aks-ray-platform::aksray:platform:Platform$"


def test_preview_steps_keep_what_changes_and_name_a_replacement_once() -> None:
    document = {
        "steps": [
            {"op": "same", "urn": f"{URN}a::same", "type": "t"},
            {"op": "update", "urn": f"{URN}a::cq", "type": "t"},
            {"op": "create-replacement", "urn": f"{URN}a::ns", "type": "t"},
            {"op": "replace", "urn": f"{URN}a::ns", "type": "t"},
            {"op": "delete-replaced", "urn": f"{URN}a::ns", "type": "t"},
            {"op": "update", "urn": "urn:stack", "type": "pulumi:pulumi:Stack"},
            {"op": "delete", "urn": f"{URN}a::lq", "type": "t"},
        ]
    }
    assert compare_change.preview_steps(document) == {
        (f"{URN}a::cq", "update"),
        (f"{URN}a::ns", "replace"),
        (f"{URN}a::lq", "delete"),
    }


def test_every_change_keeps_the_local_stack_valid_and_changes_it(tmp_path: Path) -> None:
    base = yaml.safe_load(stack_file("local").read_text())
    for name, change in compare_change.CHANGES.items():
        changed = yaml.safe_load(stack_file("local").read_text())
        change(changed["config"])
        path = tmp_path / "Pulumi.local.yaml"
        path.write_text(yaml.safe_dump(changed))
        steps = compare_change.plan_steps(stack_file("local"), path, "local")
        assert steps, name
        assert changed != base


def test_a_difference_is_one_line_per_step_naming_its_side() -> None:
    ours = {(f"{URN}a::cq", "update"), (f"{URN}a::ns", "replace")}
    engine = {(f"{URN}a::cq", "update"), (f"{URN}a::ns", "update")}
    assert compare_change.differences(ours, engine) == [
        "  only aksray: replace ns",
        "  only pulumi preview: update ns",
    ]
    assert compare_change.differences(ours, ours) == []
