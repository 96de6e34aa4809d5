"""The rig's footprint (aksray/rehearse/rig/footprint.py): a GPU node removed and added again by
the same name, as a pool scaled down and up, gets its daemon-set stand-ins again.

A stand-in deleted gracefully stays on a deleted kwok node, terminating, until the pod garbage
collector's orphan quarantine (40 s) ends: a node added back within that time collided with it
(409, "already exists", which ended prod's rehearsal). Stand-ins are deleted at once, and one
still terminating is waited out before its successor is created.
"""

from __future__ import annotations

from typing import Any

import pytest

from aksray.live.kube import KubeError
from aksray.offline.runner import run_program, stack_file
from aksray.rehearse.rig import footprint
from aksray.rehearse.rig.footprint import PODS, Nodes
from aksray.rehearse.rig.nodes import NODE_LABEL, node_name


class _Cluster:
    """Nodes and pods by path; a pod deleted without `now` stays terminating `linger` reads."""

    def __init__(self, linger: int = 0) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.terminating: dict[str, int] = {}
        self.linger = linger
        self.deletes: list[tuple[str, bool]] = []

    def get_or_none(self, path: str) -> Any:
        if path in self.terminating:
            self.terminating[path] -= 1
            if self.terminating[path] < 0:
                del self.terminating[path], self.objects[path]
        return self.objects.get(path)

    def create(self, path: str, obj: dict[str, Any]) -> Any:
        name = f"{path}/{obj['metadata']['name']}"
        if name in self.objects:
            raise KubeError(409, f'pods "{obj["metadata"]["name"]}" already exists')
        self.objects[name] = obj
        return obj

    def items(self, path: str, selector: str = "") -> list[dict[str, Any]]:
        wanted = dict(s.split("=", 1) for s in selector.split(",") if s)
        return [
            o
            for p, o in self.objects.items()
            if p.startswith(f"{path}/") and p not in self.terminating
            and wanted.items() <= o["metadata"].get("labels", {}).items()
        ]  # fmt: skip

    def delete(self, path: str, now: bool = False) -> None:
        self.deletes.append((path, now))
        if now or not path.startswith(PODS):
            self.objects.pop(path, None)
        else:
            self.terminating[path] = self.linger


@pytest.fixture(scope="module")
def settings() -> Any:
    return run_program(stack_file("prod")).settings


def _stand_ins(cluster: _Cluster, node: str) -> list[str]:
    return sorted(o["metadata"]["name"] for o in cluster.items(PODS, f"{NODE_LABEL}={node}"))


def test_a_node_removed_and_added_again_gets_its_stand_ins_again(settings: Any) -> None:
    cluster = _Cluster(linger=1000)  # as a deleted kwok node's pods: never finished gracefully
    nodes = Nodes(cluster, settings, "r1")  # type: ignore[arg-type]
    node = node_name("a100", 1)
    nodes.set("a100", 2)
    before = _stand_ins(cluster, node)
    assert before and all(name.endswith(node) for name in before)
    nodes.set("a100", 1)
    assert _stand_ins(cluster, node) == []
    assert {now for path, now in cluster.deletes if path.startswith(PODS)} == {True}
    nodes.set("a100", 2)
    assert _stand_ins(cluster, node) == before


def _node_gone_with_stand_ins_left(
    settings: Any, monkeypatch: pytest.MonkeyPatch, linger: int
) -> tuple[_Cluster, Nodes, list[str]]:
    """a100's first node deleted, its stand-ins left terminating by a graceful delete (someone
    else's: the rig's own deletes are immediate)."""
    monkeypatch.setattr("aksray.rehearse.rig.footprint.time.sleep", lambda _s: None)
    cluster = _Cluster(linger=linger)
    nodes = Nodes(cluster, settings, "r1")  # type: ignore[arg-type]
    nodes.set("a100", 1)
    node = node_name("a100", 0)
    stand_ins = _stand_ins(cluster, node)
    for name in stand_ins:
        cluster.delete(f"{PODS}/{name}")
    cluster.delete(f"/api/v1/nodes/{node}")
    return cluster, nodes, stand_ins


def test_a_stand_in_still_terminating_is_waited_out(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster, nodes, stand_ins = _node_gone_with_stand_ins_left(settings, monkeypatch, linger=3)
    nodes.set("a100", 1)
    assert _stand_ins(cluster, node_name("a100", 0)) == stand_ins


def test_a_stand_in_that_never_goes_fails_with_the_servers_message(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(footprint, "STAND_IN_GONE_SECONDS", 0.0)
    _cluster, nodes, _ = _node_gone_with_stand_ins_left(settings, monkeypatch, linger=10**9)
    with pytest.raises(KubeError, match="already exists"):
        nodes.set("a100", 1)
