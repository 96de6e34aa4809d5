"""Scrape objects: which pods and services Prometheus reads metrics from, as PodMonitors and
ServiceMonitors.

Two flavours of the same objects (docs/monitoring.md):
- `azmonitoring.coreos.com/v1`: what AKS's managed Prometheus agent (ama-metrics, the metrics
  add-on) reads; it ignores `monitoring.coreos.com`. The agent's own objects live in
  kube-system and reach their targets through `namespaceSelector`, and carry the label limits
  Azure asks every one of them to set (catalog/azure.py).
- `monitoring.coreos.com/v1`: for an existing cluster whose own Prometheus Operator reads them,
  each in its target's namespace.

Targets, and where each fact comes from:
- the GPU Operator's DCGM exporter: pods `app: nvidia-dcgm-exporter`, container port `metrics`
  (9400), in the operator's namespace (gpu-operator v26.7.0 assets/state-dcgm-exporter). The
  exporter labels each GPU's series with the pod holding it (`namespace`, `pod`, `container`)
  and a free GPU's with none: the exporter pod's own target labels of those names are dropped,
  so a GPU's `namespace` is its team's and a free GPU has no `pod`. The node name becomes
  `node`.
- Kueue: the chart's metrics Service (`app.kubernetes.io/component: metrics-service`, port
  `https`, 8443). Kueue authenticates and authorises every scrape (TokenReview and a
  SubjectAccessReview for GET /metrics), so the scraper presents its service account token and
  that account is bound to the chart's `kueue-metrics-reader` ClusterRole; its certificate is
  Kueue's own self-signed one, not checked (the token, not the server, is what is protected).
- KubeRay: the chart's operator Service (`app.kubernetes.io/name: kuberay-operator`, port
  `http`, /metrics).
- KAI Scheduler: the Services its operator creates for the scheduler, the binder and the queue
  controller (KAI docs/metrics/service-monitors.yaml).
- Ray: every head and worker pod of the stack's workloads (label `aksray.io/workload`), port
  `metrics` (manifests/ray_pods.py); Ray's metrics agent there also exports Serve's and vLLM's
  metrics. The pods' workload and team labels become target labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from catalog.azure import SCRAPE_LABEL_LIMITS
from catalog.versions import (
    AZURE_MONITOR_SCRAPE_API_VERSION,
    GPU_OPERATOR,
    KAI_SCHEDULER,
    KUBERAY_OPERATOR,
    KUEUE,
    PROMETHEUS_OPERATOR_API_VERSION,
)
from manifests.ray_pods import METRICS_PORT_NAME, TEAM_LABEL, WORKLOAD_LABEL

# The metrics add-on: where its objects live and who scrapes.
AGENT_NAMESPACE: Final = "kube-system"
AGENT_SERVICE_ACCOUNT: Final = "ama-metrics-serviceaccount"
# The scraper's own service account token, as Prometheus reads it.
SERVICE_ACCOUNT_TOKEN: Final = "/var/run/secrets/kubernetes.io/serviceaccount/token"  # noqa: S105
# The ClusterRole the Kueue chart creates for reading its metrics (release `kueue`).
KUEUE_METRICS_READER: Final = f"{KUEUE.release}-metrics-reader"
SCRAPE_INTERVAL: Final = "30s"

Kind = Literal["PodMonitor", "ServiceMonitor"]


@dataclass(frozen=True)
class ScrapeTarget:
    name: str  # also the exporter's name in dashboards/metrics.yaml
    kind: Kind
    namespaces: tuple[str, ...]  # where the targets run
    port: str  # the named container port (PodMonitor) or Service port (ServiceMonitor)
    match_labels: dict[str, str] = field(default_factory=dict)
    match_expressions: tuple[dict[str, Any], ...] = ()
    path: str = "/metrics"
    https: bool = False  # a self-signed certificate, not verified
    token: bool = False  # present the scraper's service account token
    honor_labels: bool = False
    node_label: bool = False  # the node's name as label `node`
    # The series name the pod they describe: drop the scraped pod's own labels of those names.
    describes_other_pods: bool = False
    pod_target_labels: tuple[str, ...] = ()


def scrape_targets(team_namespaces: Sequence[str]) -> list[ScrapeTarget]:
    """Every target of the stack: the four operators (in the namespaces the stack installs them
    into, which a cluster's own must use too: docs/cluster-software.md) and Ray's pods."""
    targets = _operator_targets()
    if team_namespaces:
        targets.append(
            ScrapeTarget(
                name="ray",
                kind="PodMonitor",
                namespaces=tuple(team_namespaces),
                port=METRICS_PORT_NAME,
                match_expressions=({"key": WORKLOAD_LABEL, "operator": "Exists"},),
                pod_target_labels=(WORKLOAD_LABEL, TEAM_LABEL),
                node_label=True,
            )
        )
    return targets


def _operator_targets() -> list[ScrapeTarget]:
    return [
        ScrapeTarget(
            name="dcgm-exporter",
            kind="PodMonitor",
            namespaces=(GPU_OPERATOR.namespace,),
            port="metrics",
            match_labels={"app": "nvidia-dcgm-exporter"},
            honor_labels=True,
            node_label=True,
            describes_other_pods=True,
        ),
        ScrapeTarget(
            name="kueue",
            kind="ServiceMonitor",
            namespaces=(KUEUE.namespace,),
            port="https",
            match_labels={
                "app.kubernetes.io/name": KUEUE.chart,
                "app.kubernetes.io/component": "metrics-service",
            },
            https=True,
            token=True,
        ),
        ScrapeTarget(
            name="kuberay-operator",
            kind="ServiceMonitor",
            namespaces=(KUBERAY_OPERATOR.namespace,),
            port="http",
            match_labels={"app.kubernetes.io/name": KUBERAY_OPERATOR.chart},
        ),
        *(
            ScrapeTarget(
                name=f"kai-{component}",
                kind="ServiceMonitor",
                namespaces=(KAI_SCHEDULER.namespace,),
                port=port,
                match_labels={"app": app},
                token=token,
            )
            for component, app, port, token in (
                ("scheduler", "kai-scheduler-default", "http-metrics", True),
                ("binder", "binder", "http-metrics", True),
                ("queue-controller", "queue-controller", "metrics", False),
            )
        ),
    ]


def api_version(*, managed: bool) -> str:
    """`managed`: AKS's metrics add-on scrapes; else the cluster's Prometheus Operator."""
    return AZURE_MONITOR_SCRAPE_API_VERSION if managed else PROMETHEUS_OPERATOR_API_VERSION


def scrape_objects(targets: Sequence[ScrapeTarget], *, managed: bool) -> list[dict[str, Any]]:
    """One object per target (managed), or per target and namespace (Prometheus Operator)."""
    if managed:
        return [_object(t, AGENT_NAMESPACE, t.namespaces, managed=True) for t in targets]
    return [_object(t, ns, (ns,), managed=False) for t in targets for ns in t.namespaces]


def _object(
    target: ScrapeTarget, namespace: str, selects: Sequence[str], *, managed: bool
) -> dict[str, Any]:
    selector: dict[str, Any] = {}
    if target.match_labels:
        selector["matchLabels"] = dict(target.match_labels)
    if target.match_expressions:
        selector["matchExpressions"] = [dict(e) for e in target.match_expressions]
    spec: dict[str, Any] = {
        "selector": selector,
        "namespaceSelector": {"matchNames": list(selects)},
        "podMetricsEndpoints" if target.kind == "PodMonitor" else "endpoints": [_endpoint(target)],
    }
    if target.pod_target_labels:
        spec["podTargetLabels"] = list(target.pod_target_labels)
    if managed:
        spec.update(SCRAPE_LABEL_LIMITS)
    return {
        "apiVersion": api_version(managed=managed),
        "kind": target.kind,
        "metadata": {
            "name": f"aksray-{target.name}",
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "aksray"},
        },
        "spec": spec,
    }


def _endpoint(target: ScrapeTarget) -> dict[str, Any]:
    endpoint: dict[str, Any] = {
        "port": target.port,
        "path": target.path,
        "interval": SCRAPE_INTERVAL,
    }
    if target.https:
        endpoint["scheme"] = "https"
        endpoint["tlsConfig"] = {"insecureSkipVerify": True}
    if target.token:
        endpoint["bearerTokenFile"] = SERVICE_ACCOUNT_TOKEN
    if target.honor_labels:
        endpoint["honorLabels"] = True
    relabelings: list[dict[str, Any]] = []
    if target.node_label:
        relabelings.append(
            {
                "sourceLabels": ["__meta_kubernetes_pod_node_name"],
                "targetLabel": "node",
                "action": "replace",
            }
        )
    if target.describes_other_pods:
        relabelings.append({"action": "labeldrop", "regex": "namespace|pod|container"})
    if relabelings:
        endpoint["relabelings"] = relabelings
    return endpoint


def kueue_metrics_reader_binding() -> dict[str, Any]:
    """The metrics add-on's service account may read Kueue's metrics (the chart's role)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"aksray-{KUEUE_METRICS_READER}"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": KUEUE_METRICS_READER,
        },
        "subjects": [
            {
                "kind": "ServiceAccount",
                "name": AGENT_SERVICE_ACCOUNT,
                "namespace": AGENT_NAMESPACE,
            }
        ],
    }
