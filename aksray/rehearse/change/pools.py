"""What a change to the stack's pools does to the nodes, played on the rig as Azure plays it.

On the rig the stack is an existing cluster: the node pools are not its resources, so the rig
changes the nodes itself, as AKS would during the same `pulumi up`:

- a pool whose VM size changes is replaced (azure-native: `vmSize` forces a new AgentPool, the
  old one deleted first): its nodes are drained and deleted, and the new pool's nodes join with
  new names (a new scale set);
- a new `maxCount` is how many nodes the pool can have: nodes join up to it, and above it the
  highest-numbered nodes are drained and deleted (the rig keeps every pool at its maximum);
- a pool added joins with its nodes, a pool removed is drained and deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from aksray.live.kube import Kube
from aksray.rehearse.rig.nodes import REHEARSAL_LABEL, PoolNodes, cluster_pools, node_object
from catalog.pools import POOL_LABEL_KEY

if TYPE_CHECKING:
    from settings.model import ClusterSettings


@dataclass(frozen=True)
class PoolChange:
    pool: str
    what: str  # one line for the timeline
    old: PoolNodes | None
    new: PoolNodes | None

    @property
    def replaced(self) -> bool:
        return (
            self.old is not None and self.new is not None and self.old.vm_size != self.new.vm_size
        )


def pool_changes(old: ClusterSettings, new: ClusterSettings) -> list[PoolChange]:
    """Every pool whose nodes change, in the stack's pool order."""
    before = {p.pool: p for p in cluster_pools(old)}
    after = {p.pool: p for p in cluster_pools(new)}
    changes = []
    for name in [*before, *(n for n in after if n not in before)]:
        was, now = before.get(name), after.get(name)
        if was is None and now is not None:
            changes.append(PoolChange(name, f"pool added: {now.count} x {now.vm_size}", None, now))
        elif now is None and was is not None:
            changes.append(
                PoolChange(name, f"pool removed ({was.count} x {was.vm_size})", was, None)
            )
        elif was is not None and now is not None and was.vm_size != now.vm_size:
            changes.append(
                PoolChange(
                    name,
                    f"pool replaced, VM size {was.vm_size} -> {now.vm_size}: its {was.count} "
                    f"node(s) drained and deleted, {now.count} new ones",
                    was,
                    now,
                )
            )
        elif was is not None and now is not None and was.count != now.count:
            changes.append(
                PoolChange(name, f"maxCount {was.count} -> {now.count}: nodes follow", was, now)
            )
    return changes


def pool_nodes(kube: Kube, pool: str, rehearsal: str) -> list[str]:
    """The pool's nodes this rehearsal made (on a cluster of the user's, no other)."""
    selector = f"{POOL_LABEL_KEY}={pool},{REHEARSAL_LABEL}={rehearsal}"
    return sorted(n["metadata"]["name"] for n in kube.items("/api/v1/nodes", selector))


def drain_and_delete(kube: Kube, nodes: list[str]) -> int:
    """What AKS does to a node it removes: cordoned (nothing new lands on it), its pods evicted,
    then the node deleted; how many pods were evicted. Without the cordon a scheduler bound the
    pods KubeRay made again to the nodes about to go (seen on the rig)."""
    for name in nodes:
        kube.merge_patch(f"/api/v1/nodes/{name}", {"spec": {"unschedulable": True}})
    gone = set(nodes)
    evicted = 0
    for pod in kube.items("/api/v1/pods"):
        if (pod.get("spec") or {}).get("nodeName") in gone:
            meta = pod["metadata"]
            kube.delete(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}")
            evicted += 1
    for name in nodes:
        kube.delete(f"/api/v1/nodes/{name}")
    return evicted


def scale_set(node: str) -> int:
    """The scale set a node name carries (rig/nodes.py `node_name`)."""
    return int(node.split("-")[2]) - 10000000


def apply_pool_change(kube: Kube, change: PoolChange, rehearsal: str) -> tuple[set[str], int]:
    """Change the rig's nodes as AKS would; the names of the nodes taken away, and how many
    pods went with them."""
    existing = pool_nodes(kube, change.pool, rehearsal)
    current = max((scale_set(n) for n in existing), default=0)
    if change.new is None or change.replaced:
        removed = set(existing)
        generation, keep = current + 1, 0
    else:
        removed = set(existing[change.new.count :])
        generation, keep = current, len(existing) - len(removed)
    evicted = drain_and_delete(kube, sorted(removed))
    if change.new is not None:
        for index in range(keep, change.new.count):
            kube.create("/api/v1/nodes", node_object(change.new, index, rehearsal, generation))
    return removed, evicted
