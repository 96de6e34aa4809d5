"""Building values from the composed YAML graph: merge keys, tags, keys inside a setting."""

from __future__ import annotations

from typing import Any

import pytest

from aksray.stackfile.bounded_yaml import StackFileError, load_stack_yaml
from aksray.stackfile.values import key_text


def _read(text: str) -> Any:
    return load_stack_yaml(text.encode(), "Pulumi.x.yaml")


def test_a_map_keeps_its_own_keys_over_merged_ones_and_the_first_listed_map_wins() -> None:
    document = _read(
        "config:\n  p:a: &a {x: 1, y: 1}\n  p:b: &b {y: 2, z: 2}\n"
        "  p:c:\n    <<: [*a, *b]\n    x: 0\n"
    )
    assert document["config"]["p:c"] == {"x": 0, "y": 1, "z": 2}


def test_merge_keys_apply_inside_merged_maps() -> None:
    document = _read("config:\n  p:a: &a {x: 1}\n  p:b: &b {<<: *a, y: 2}\n  p:c: {<<: *b}\n")
    assert document["config"]["p:c"] == {"x": 1, "y": 2}


def test_an_alias_after_a_redefined_anchor_takes_the_latest() -> None:
    document = _read("a: &x [1]\nb: *x\nc: &x [2]\nd: *x\n")
    assert document == {"a": [1], "b": [1], "c": [2], "d": [2]}


@pytest.mark.parametrize(
    ("key", "text"),
    [(None, "<nil>"), (True, "true"), (1, "1"), (5, "5"), (1.5, "1.5"), (1e22, "1e+22")],
)
def test_a_key_inside_a_setting_is_text_as_go_prints_it(key: object, text: str) -> None:
    assert key_text(key) == text


def test_tags_on_maps_and_lists_do_not_change_their_shape() -> None:
    document = _read("s: !!set {a, b}\no: !!omap [{a: 1}]\nm: !thing {a: 1}\n")
    assert document == {"s": {"a": None, "b": None}, "o": [{"a": 1}], "m": {"a": 1}}


def test_a_value_the_cli_refuses_names_its_config_path() -> None:
    with pytest.raises(StackFileError) as caught:
        _read("config:\n  aks-ray-platform:cluster:\n    gpuPools:\n      - {maxCount: .nan}\n")
    assert caught.value.path == "cluster.gpuPools[0].maxCount"
    assert caught.value.message.endswith("(line 4, column 20)")
