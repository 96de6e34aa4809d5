"""The plan summary's cluster line: which cluster, which Kubernetes, which AKS tier.

Read from the ManagedCluster the program registered (what `pulumi up` would send), not from
the settings, so the line shows what Azure would be asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from aksray.plan.model.plan import Plan

MANAGED_CLUSTER: Final = "azure-native:containerservice:ManagedCluster"
# What each AKS tier means for the cluster, in a few words.
TIER_NOTES: Final = {
    "Free": "no uptime SLA, meant for up to 10 nodes: not for production",
    "Standard": "uptime SLA, control plane for up to 5,000 nodes",
    "Premium": "Standard plus Long Term Support eligibility",
}


def cluster(plan: Plan) -> dict[str, Any]:
    settings = plan.settings.cluster
    if settings.mode != "aks":
        return {"mode": settings.mode, "context": settings.kubeconfig_context}
    (aks,) = plan.result.by_type(MANAGED_CLUSTER)
    sku = aks.inputs.get("sku") or {}
    return {
        "mode": "aks",
        "name": aks.inputs.get("resourceName"),
        "kubernetesVersion": aks.inputs.get("kubernetesVersion"),
        # AKS's own default when a cluster names no tier is Free.
        "tier": sku.get("tier", "Free"),
    }


def cluster_lines(data: Mapping[str, Any]) -> list[str]:
    if data["mode"] != "aks":
        return [
            f"Cluster: existing, kubeconfig context {data['context']} (its Kubernetes version "
            "and tier are set where that cluster is managed)"
        ]
    tier = data["tier"]
    return [
        f"Cluster: AKS {data['name']}, Kubernetes {data['kubernetesVersion']}, tier {tier} "
        f"({TIER_NOTES.get(tier, 'unknown tier')}; cluster.tier)"
    ]
