"""What a rehearsal puts on a cluster besides the stack (kwok Nodes, and on each GPU node the
stand-ins of its daemon sets) and what the stack leaves behind after `pulumi destroy`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from aksray.live.kube import Kube, KubeError
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

PODS: Final = f"/api/v1/namespaces/{DAEMON_SET_NAMESPACE}/pods"
# How long a stand-in left terminating by someone else is waited out before its successor.
STAND_IN_GONE_SECONDS: Final = 60.0


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
                    self._create_stand_in(pod)
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

    def _create_stand_in(self, pod: dict[str, Any]) -> None:
        """A stand-in of the node's name before it (deleted by another, still terminating) is
        waited out, for at most STAND_IN_GONE_SECONDS."""
        deadline = time.monotonic() + STAND_IN_GONE_SECONDS
        while True:
            try:
                self.kube.create(PODS, pod)
                return
            except KubeError as error:
                if error.status != 409 or time.monotonic() > deadline:
                    raise
            if self.kube.get_or_none(f"{PODS}/{pod['metadata']['name']}") is not None:
                time.sleep(1)

    def _remove_daemon_sets(self, selector: str = "") -> None:
        """The daemon-set stand-ins of this rehearsal (of one node with `selector`), at once:
        with no grace period, since a pod left terminating on a deleted kwok node stays until
        the pod garbage collector's orphan quarantine (40 s) ends, and a node added back by the
        same name before that could not get its stand-ins."""
        wanted = ",".join(filter(None, (f"{REHEARSAL_LABEL}={self.rehearsal}", selector)))
        for pod in self.kube.items(PODS, wanted):
            self.kube.delete(f"{PODS}/{pod['metadata']['name']}", now=True)


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
