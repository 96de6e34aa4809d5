"""What a rehearsal puts on a cluster besides the stack (kwok Nodes, and on each GPU node the
stand-ins of its daemon sets) and what the stack leaves behind after `pulumi destroy`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aksray.live.kube import Kube
from aksray.rehearse.rig.nodes import (
    DAEMON_SET_NAMESPACE,
    NODE_LABEL,
    REHEARSAL_LABEL,
    cluster_pools,
    daemon_set_pods,
    node_name,
    node_object,
)

if TYPE_CHECKING:
    from settings.model import Settings


@dataclass
class Nodes:
    """The kwok Nodes of the stack's pools, created and removed by name."""

    kube: Kube
    settings: Settings
    rehearsal: str

    def set(self, pool_name: str, count: int) -> None:
        pool = next(p for p in cluster_pools(self.settings.cluster) if p.pool == pool_name)
        for index in range(max(pool.count, count) + 1):
            path = f"/api/v1/nodes/{node_name(pool.pool, index)}"
            exists = self.kube.get_or_none(path) is not None
            if index < count and not exists:
                self.kube.create("/api/v1/nodes", node_object(pool, index, self.rehearsal))
                for pod in daemon_set_pods(pool, index, self.rehearsal):
                    self.kube.create(f"/api/v1/namespaces/{DAEMON_SET_NAMESPACE}/pods", pod)
            elif index >= count and exists:
                self._remove_daemon_sets(f"{NODE_LABEL}={node_name(pool.pool, index)}")
                self.kube.delete(path)

    def all_at_max(self) -> None:
        for pool in cluster_pools(self.settings.cluster):
            self.set(pool.pool, pool.count)

    def remove_all(self) -> None:
        self._remove_daemon_sets()
        for node in self.kube.items("/api/v1/nodes", f"{REHEARSAL_LABEL}={self.rehearsal}"):
            self.kube.delete(f"/api/v1/nodes/{node['metadata']['name']}")

    def _remove_daemon_sets(self, selector: str = "") -> None:
        """The daemon-set stand-ins of this rehearsal (of one node with `selector`), at once."""
        pods = f"/api/v1/namespaces/{DAEMON_SET_NAMESPACE}/pods"
        wanted = ",".join(filter(None, (f"{REHEARSAL_LABEL}={self.rehearsal}", selector)))
        for pod in self.kube.items(pods, wanted):
            self.kube.delete(f"{pods}/{pod['metadata']['name']}")


def leftovers(kube: Kube, namespaces: tuple[str, ...], timeout: float = 90) -> list[str]:
    """What is still there after `pulumi destroy` (waiting for finalizers to finish)."""
    deadline = time.monotonic() + timeout
    kueue = "/apis/kueue.x-k8s.io/v1beta2"
    while True:
        left = [
            f"namespace {ns}" for ns in namespaces if kube.get_or_none(f"/api/v1/namespaces/{ns}")
        ]
        for plural in ("clusterqueues", "resourceflavors", "cohorts", "workloadpriorityclasses"):
            left += [f"{plural} {x['metadata']['name']}" for x in kube.items(f"{kueue}/{plural}")]
        queues = kube.items("/apis/scheduling.run.ai/v2/queues")
        left += [f"queues {x['metadata']['name']}" for x in queues]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(1)
