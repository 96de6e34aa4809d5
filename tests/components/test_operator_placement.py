"""Where the operators run: controllers on the CPU pool, node agents on every GPU node."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from catalog.pools import CRITICAL_ADDONS_TAINT, gpu_pool_node_taints
from tests.support.harness import planned
from tests.support.operators import values

CPU_POOL_SELECTOR = {"kubernetes.azure.com/agentpool": "cpu"}
CONTROLLER_SELECTORS: dict[str, list[tuple[str, ...]]] = {
    "aksray-operators-gpu-operator": [
        ("operator", "nodeSelector"),
        ("node-feature-discovery", "master", "nodeSelector"),
        ("node-feature-discovery", "gc", "nodeSelector"),
    ],
    "aksray-operators-kuberay-operator": [("nodeSelector",)],
    "aksray-operators-kueue": [("controllerManager", "nodeSelector")],
    "aksray-operators-kai-scheduler": [("global", "nodeSelector")],
}


def _at(tree: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = tree
    for key in path:
        node = node[key]
    return node


def _all_tolerations(tree: Any) -> Iterator[dict[str, Any]]:
    if isinstance(tree, Mapping):
        for key, value in tree.items():
            if key == "tolerations":
                yield from value
            else:
                yield from _all_tolerations(value)


def _tolerates(tolerations: list[dict[str, Any]], taint: dict[str, str]) -> bool:
    return any(
        t.get("key") == taint["key"]
        and t.get("effect") in (None, taint["effect"])
        and (t.get("operator") == "Exists" or t.get("value") == taint["value"])
        for t in tolerations
    )


@pytest.mark.parametrize("name", sorted(CONTROLLER_SELECTORS))
def test_controllers_and_webhooks_run_on_the_cpu_pool(name: str) -> None:
    found = values(planned("prod"), name)
    for path in CONTROLLER_SELECTORS[name]:
        assert _at(found, path) == CPU_POOL_SELECTOR, path
    # Nothing we set lets an operator onto the tainted system pool.
    assert not any(t.get("key") == CRITICAL_ADDONS_TAINT["key"] for t in _all_tolerations(found))


def test_gpu_node_agents_tolerate_every_gpu_pool_taint_spot_included() -> None:
    gpu = values(planned("prod"), "aksray-operators-gpu-operator")  # prod has a spot pool
    for tolerations in (
        gpu["daemonsets"]["tolerations"],
        gpu["node-feature-discovery"]["worker"]["tolerations"],
    ):
        for taint in gpu_pool_node_taints(spot=True):
            assert _tolerates(tolerations, taint), taint
    # The node agents are DaemonSets on GPU nodes: no CPU-pool selector for them.
    assert "nodeSelector" not in gpu["daemonsets"]
    assert "nodeSelector" not in gpu["node-feature-discovery"]["worker"]
