"""Property paths as the engine writes them, its prefix match, and the diff of two inputs."""

from __future__ import annotations

import pytest

from aksray.plan.change.model import PathChange
from aksray.plan.change.paths import covers, diff_inputs, format_path, parse_path, value_at


@pytest.mark.parametrize(
    ("segments", "text"),
    [
        (("spec", "resourceGroups", 0, "flavors"), "spec.resourceGroups[0].flavors"),
        (("metadata", "labels", "kueue.x-k8s.io/queue-name"),
         'metadata.labels["kueue.x-k8s.io/queue-name"]'),
        ((0, "name"), "[0].name"),
        (("a b",), '["a b"]'),
    ],
)  # fmt: skip
def test_paths_round_trip_in_the_engines_syntax(segments: tuple[str | int, ...], text: str) -> None:
    assert format_path(segments) == text
    assert parse_path(text) == segments


def test_a_path_that_is_not_one_is_refused() -> None:
    with pytest.raises(ValueError, match="not a property path"):
        parse_path("spec..x")


@pytest.mark.parametrize(
    ("prefix", "path", "expected"),
    [
        ("spec", "spec.rayClusterConfig.suspend", True),
        ("spec", "spec", True),
        ("spec.rayClusterConfig", "spec.entrypoint", False),
        ("spec.*.suspend", "spec.rayClusterConfig.suspend", True),
        ("spec.template", "spec", False),  # a prefix longer than the path covers nothing
        ("metadata.labels", 'metadata.labels["a/b"]', True),
        ("spec.items[*].x", "spec.items[3].x", True),
    ],
)
def test_covers_is_the_engines_prefix_match(prefix: str, path: str, expected: bool) -> None:
    assert covers(prefix, path) is expected


def test_value_at_follows_keys_and_indexes() -> None:
    data = {"spec": {"groups": [{"name": "a"}, {"name": "b"}]}}
    assert value_at(data, "spec.groups[1].name") == (True, "b")
    assert value_at(data, "spec.groups[2].name") == (False, None)
    assert value_at(data, "spec.missing") == (False, None)


def test_diff_reports_each_changed_leaf_with_its_old_and_new_value() -> None:
    old = {"vmSize": "A", "tags": {"x": "1"}, "zones": ["1", "2"], "gone": True}
    new = {"vmSize": "B", "tags": {"x": "1", "y": "2"}, "zones": ["1"], "count": 1}
    assert diff_inputs(old, new) == [
        PathChange("count", "add", new=1),
        PathChange("gone", "delete", old=True),
        PathChange("tags.y", "add", new="2"),
        PathChange("vmSize", "update", old="A", new="B"),
        PathChange("zones[1]", "delete", old="2"),
    ]


def test_a_change_of_type_is_a_change_even_when_values_compare_equal() -> None:
    assert diff_inputs({"n": 1}, {"n": True}) == [PathChange("n", "update", old=1, new=True)]
    assert diff_inputs({"n": 1}, {"n": 1}) == []
