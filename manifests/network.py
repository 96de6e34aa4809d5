"""Per workload a NetworkPolicy: who may reach the pods of its Ray cluster at all.

A Ray head listens on every address (`dashboard-host 0.0.0.0`; KubeRay's Services and the
workers reach it there), and code submitted to it runs as the team's workload identity. Besides
Ray's token (manifests/ray_pods.py `RAY_AUTH_OPTIONS`), each workload's pods admit only:

- each other, on every port: GCS, raylets, object managers and Ray's worker processes use many
  ports, some chosen at random;
- the KubeRay operator, on the dashboard (HTTPMode job submission and status, Serve config) and,
  for the endpoint, on Serve's port (KubeRay checks the head's Serve proxy there). Kueue and KAI
  never call a Ray pod: they work on the Kubernetes objects;
- for the endpoint, Serve's port from the pods of the team's own namespace;
- with observability on, Ray's metrics port from the scraper: AKS's metrics add-on (its
  `ama-metrics` pods in kube-system) or, on an existing cluster, its Prometheus (any namespace:
  where the cluster runs it is not the stack's to know; the port serves read-only metrics).

Ingress only: the payloads need Blob, Hugging Face, PyPI (runtime_env) and DNS. `kubectl
port-forward` is not pod-network traffic: the kubelet and the container runtime connect to the
port from inside the pod's own network namespace, so no policy applies to it.

Plain `networking.k8s.io/v1` objects, enforced by AKS's Cilium dataplane. KubeRay 1.6 has no
policy of its own (1.7's `spec.networkPolicy` sits behind a feature gate, off by default).
"""

from __future__ import annotations

from typing import Any, Final

from catalog.versions import KUBERAY_OPERATOR
from manifests.namespaces import MANAGED_BY
from manifests.ray_pods import (
    DASHBOARD_PORT,
    METRICS_PORT,
    SERVE_PORT,
    TEAM_LABEL,
    WORKLOAD_LABEL,
    Team,
)
from settings.model import Settings
from workloads.spec import WorkloadSpec

# The chart's operator pods: `app.kubernetes.io/name` is its `nameOverride` (values.yaml).
KUBERAY_OPERATOR_POD_LABELS: Final = {"app.kubernetes.io/name": "kuberay-operator"}
NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"  # set by the apiserver
# AKS's metrics add-on: the replica set that reads PodMonitors runs in kube-system with this label.
METRICS_AGENT_PEER: Final = {
    "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "kube-system"}},
    "podSelector": {"matchLabels": {"rsName": "ama-metrics"}},
}
# A cluster's own Prometheus, wherever it runs.
ANY_SCRAPER_PEER: Final[dict[str, Any]] = {"namespaceSelector": {}, "podSelector": {}}


def _tcp(*ports: int) -> list[dict[str, Any]]:
    return [{"protocol": "TCP", "port": port} for port in ports]


def kuberay_operator_peer(*, installed: bool) -> dict[str, Any]:
    """The operator's pods: in our release's namespace, or in any (a cluster's own KubeRay)."""
    namespace = (
        {"matchLabels": {NAMESPACE_NAME_LABEL: KUBERAY_OPERATOR.namespace}} if installed else {}
    )
    return {
        "namespaceSelector": namespace,
        "podSelector": {"matchLabels": dict(KUBERAY_OPERATOR_POD_LABELS)},
    }


def workload_network_policy(
    spec: WorkloadSpec,
    team: Team,
    *,
    kuberay_installed: bool,
    metrics_scraper: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`metrics_scraper`: the peer that scrapes Ray's metrics port (None: no one does)."""
    own = {"matchLabels": {WORKLOAD_LABEL: spec.name}}
    serves = spec.kind == "RayService"
    operator_ports = (DASHBOARD_PORT, SERVE_PORT) if serves else (DASHBOARD_PORT,)
    ingress: list[dict[str, Any]] = [
        {"from": [{"podSelector": own}]},
        {
            "from": [kuberay_operator_peer(installed=kuberay_installed)],
            "ports": _tcp(*operator_ports),
        },
    ]
    if serves:
        ingress.append({"from": [{"podSelector": {}}], "ports": _tcp(SERVE_PORT)})
    if metrics_scraper is not None:
        ingress.append({"from": [dict(metrics_scraper)], "ports": _tcp(METRICS_PORT)})
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": f"ray-{spec.name}",
            "namespace": team.namespace,
            "labels": {**MANAGED_BY, WORKLOAD_LABEL: spec.name, TEAM_LABEL: team.name},
        },
        "spec": {"podSelector": own, "policyTypes": ["Ingress"], "ingress": ingress},
    }


def stack_network_policy(spec: WorkloadSpec, team: Team, settings: Settings) -> dict[str, Any]:
    """`workload_network_policy` under the stack's operator and observability settings."""
    return workload_network_policy(
        spec,
        team,
        kuberay_installed=settings.operators.install,
        metrics_scraper=metrics_scraper(settings),
    )


def metrics_scraper(settings: Settings) -> dict[str, Any] | None:
    """Who scrapes the Ray pods' metrics under the stack's observability settings."""
    observability = settings.observability
    if not observability.enabled:
        return None
    if settings.cluster.mode == "aks":
        return METRICS_AGENT_PEER
    return ANY_SCRAPER_PEER if observability.prometheus_operator else None
