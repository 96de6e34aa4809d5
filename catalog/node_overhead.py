"""What an AKS GPU node keeps before any pod of the stack asks: the memory the kernel holds back
from the VM's size, and the requests of the daemon sets that run on every GPU node.

Kernel. A node's capacity is what the kernel reports (`/proc/meminfo` MemTotal, read by the
kubelet through cAdvisor), not the VM size's nominal memory: the kernel keeps a page struct per
4 KiB page (1/64 of memory) plus firmware holes and the crash kernel. Reported capacities on AKS
(`kubectl describe node`, in public issues) lie 0.10-0.16 GiB below nominal x 63/64:
Standard_NC4as_T4_v3 28 GiB -> 28736340Ki (carverauto/threadr#68), a 16 GiB node -> 16403296Ki
(Azure/AKS#1216), a 7 GiB node -> 7113660Ki (Azure/azure-cli-extensions#1758), Standard_F2s_v2
4 GiB -> 4025836Ki (Azure/AKS#3525). The model takes nominal x 63/64 - 256 MiB, below every one
of them. No reported capacity of the large GPU sizes was found; check a live node with
`kubectl get node -o jsonpath='{.status.capacity.memory}'`.

Daemon sets. Every GPU node of the stack's clusters runs these (Azure CNI overlay with the Cilium
dataplane, the disk and file CSI node plugins, the cloud node manager, managed Prometheus's node
agent, the GPU Operator's node feature discovery worker). A pod's request is the larger of its
containers' sum and its largest init container (Kubernetes, "Init Containers"). The GPU
Operator's operands (driver, toolkit, device plugin, feature discovery, DCGM exporter,
validator, MIG manager) request nothing at v26.7.0 (its values.yaml and clusterpolicy template
set no resources), nor do KAI v0.17.0's (its NUMA exporter runs only with the NUMA plugin,
off here). kube-proxy does not run (Cilium replaces it). The metrics agent is counted whether or
not `observability.enabled` is on, so that turning monitoring on never makes a worker size that
fitted stop fitting. azure-cns is inferred (its public manifest sets no requests; Azure/AKS#3525
reports 550 MB for azure-cns and azure-npm together, azure-npm 300Mi per Azure/AKS#2033):
confirm with `kubectl -n kube-system get ds azure-cns -o jsonpath='{..resources}'`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

MIB: Final = 1024**2
# capacity = nominal x KERNEL_KEPT_NUMERATOR / KERNEL_KEPT_DENOMINATOR - KERNEL_KEPT_FIXED_BYTES
KERNEL_KEPT_NUMERATOR: Final = 63
KERNEL_KEPT_DENOMINATOR: Final = 64
KERNEL_KEPT_FIXED_BYTES: Final = 256 * MIB


@dataclass(frozen=True)
class DaemonSet:
    """One daemon set's pod on a GPU node: its requests and where they were read."""

    name: str
    namespace: str
    cpu_millis: int
    memory_mib: int
    source: str


GPU_NODE_DAEMON_SETS: Final = (
    DaemonSet(
        "cilium", "kube-system", 100, 100,
        "Azure/azure-container-networking test/integration/manifests/cilium/v1.18 cilium-agent "
        "daemonset: only init container clean-cilium-state requests (100m, 100Mi); Azure/AKS#5244",
    ),
    DaemonSet(
        "azure-cns", "kube-system", 40, 250,
        "inferred: Azure/AKS#3525 (azure-cns and azure-npm 550 MB), Azure/AKS#2033 (npm 300Mi)",
    ),
    DaemonSet(
        "azure-ip-masq-agent", "kube-system", 100, 50,
        "Azure/azure-container-networking test/integration/manifests/ip-masq-agent",
    ),
    DaemonSet(
        "cloud-node-manager", "kube-system", 50, 50,
        "observed on an AKS node: Azure/AKS#5251 (describe node, 2025-11)",
    ),
    DaemonSet(
        "csi-azuredisk-node", "kube-system", 30, 60,
        "kubernetes-sigs/azuredisk-csi-driver deploy/csi-azuredisk-node.yaml: 3 x (10m, 20Mi)",
    ),
    DaemonSet(
        "csi-azurefile-node", "kube-system", 30, 60,
        "kubernetes-sigs/azurefile-csi-driver deploy/csi-azurefile-node.yaml: 3 x (10m, 20Mi)",
    ),
    DaemonSet(
        "ama-metrics-node", "kube-system", 70, 180,
        "Azure/prometheus-collector addon chart: DsCPURequestLinux 50m, DsMemoryRequestLinux "
        "150Mi, addon-token-adapter (20m, 30Mi)",
    ),
    DaemonSet(
        "gpu-operator-node-feature-discovery-worker", "gpu-operator", 5, 64,
        "GPU Operator v26.7.0 subchart node-feature-discovery 0.19.0 values.yaml worker requests",
    ),
)  # fmt: skip


def daemon_set_cpu_millis() -> int:
    return sum(d.cpu_millis for d in GPU_NODE_DAEMON_SETS)


def daemon_set_memory_bytes() -> int:
    return sum(d.memory_mib for d in GPU_NODE_DAEMON_SETS) * MIB
