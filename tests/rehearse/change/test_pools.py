"""A change to the stack's pools, as the rig plays it on its nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aksray.offline.runner import run_program
from aksray.rehearse.change.pools import apply_pool_change, pool_changes
from aksray.rehearse.rig.nodes import REHEARSAL_LABEL, node_name, node_object

DAY2 = Path(__file__).resolve().parents[2] / "stacks" / "day2"


def cluster(name: str) -> Any:
    result = run_program(DAY2 / name)
    assert result.ok, result.problems
    return result.settings.cluster


def test_a_new_max_count_is_followed_and_a_new_vm_size_replaces_the_pool() -> None:
    grown = pool_changes(cluster("2-team-moved.yaml"), cluster("3-pool-max-count.yaml"))
    assert [(c.pool, c.what, c.replaced) for c in grown] == [
        ("a100", "maxCount 6 -> 7: nodes follow", False)
    ]
    resized = pool_changes(cluster("3-pool-max-count.yaml"), cluster("4-pool-vm-size.yaml"))
    assert [(c.pool, c.replaced) for c in resized] == [("a100", True)]
    assert resized[0].what == (
        "pool replaced, VM size Standard_NC24ads_A100_v4 -> Standard_NC48ads_A100_v4: its 7 "
        "node(s) drained and deleted, 7 new ones"
    )
    assert pool_changes(cluster("0-base.yaml"), cluster("1-team-added.yaml")) == []


class FakeKube:
    """Nodes and pods by name, as the API lists them (label selectors of `key=value` pairs)."""

    def __init__(self, nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> None:
        self.nodes = {n["metadata"]["name"]: n for n in nodes}
        self.pods = pods
        self.deleted: list[str] = []
        self.cordoned: list[str] = []

    def items(self, path: str, selector: str | None = None) -> list[dict[str, Any]]:
        if path == "/api/v1/pods":
            return self.pods
        wanted = dict(pair.split("=") for pair in (selector or "").split(",") if pair)
        return [n for n in self.nodes.values() if wanted.items() <= n["metadata"]["labels"].items()]

    def merge_patch(self, path: str, patch: dict[str, Any]) -> None:
        self.cordoned.append(path.rsplit("/", 1)[1])
        assert patch == {"spec": {"unschedulable": True}}

    def delete(self, path: str) -> None:
        self.deleted.append(path)
        self.nodes.pop(path.rsplit("/", 1)[1], None)

    def create(self, _path: str, obj: dict[str, Any]) -> None:
        self.nodes[obj["metadata"]["name"]] = obj


def test_a_replaced_pool_drains_its_nodes_and_comes_back_under_new_names() -> None:
    (change,) = pool_changes(cluster("3-pool-max-count.yaml"), cluster("4-pool-vm-size.yaml"))
    assert change.old is not None and change.new is not None
    nodes = [node_object(change.old, i, "run-r") for i in range(7)]
    other = node_object(change.old, 0, "someone-elses")  # not this rehearsal's: left alone
    other["metadata"]["name"] = "aks-a100-users-own"
    pod = {
        "metadata": {"namespace": "team-a", "name": "p"},
        "spec": {"nodeName": node_name("a100", 2)},
    }
    kube = FakeKube([*nodes, other], [pod])
    removed, evicted = apply_pool_change(kube, change, "run-r")  # type: ignore[arg-type]
    assert removed == {node_name("a100", i) for i in range(7)}
    assert evicted == 1
    assert kube.cordoned == sorted(removed)  # before any pod is evicted
    assert kube.deleted[0] == "/api/v1/namespaces/team-a/pods/p"
    assert sorted(kube.nodes) == sorted(
        [*(node_name("a100", i, 1) for i in range(7)), "aks-a100-users-own"]
    )
    new = kube.nodes[node_name("a100", 0, 1)]
    assert (
        new["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "Standard_NC48ads_A100_v4"
    )
    assert new["metadata"]["labels"][REHEARSAL_LABEL] == "run-r"
