"""Objects of other projects' APIs that the pinned charts create behind a value switch.

A chart may render (or have its operator create) a custom resource whose CRD it does not ship: a
Prometheus Operator ServiceMonitor, cert-manager Certificates, OpenShift SecurityContextConstraints.
On a cluster the same `pulumi up` creates, no such CRD exists: Helm fails the release ("no
matches for kind"), or the operator stops short (the GPU Operator, missing the ServiceMonitor CRD,
logs "Couldn't find ServiceMonitor CRD" and holds back GPU feature discovery). `aksray plan`
refuses a release whose values turn any of these on while nothing in the stack installs the CRD
(aksray/plan/checks/crds.py). The tests check every row against the chart templates at the pinned
versions, and that no template renders such an object without a row.

The API groups each chart ships CRDs for are catalog.versions.CRD_GROUP_RELEASES.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from catalog.versions import CRD_GROUP_RELEASES

PROMETHEUS_OPERATOR_GROUP: Final = "monitoring.coreos.com"
# Installed on an AKS cluster by Azure Monitor's metrics add-on (azureMonitorProfile.metrics).
AZURE_MONITOR_SCRAPE_GROUP: Final = "azmonitoring.coreos.com"


def is_built_in_group(group: str) -> bool:
    """Kubernetes' own API groups: the core group, the dotless ones (apps, batch, policy...)
    and *.k8s.io; x-k8s.io and k8s-sigs.io belong to add-on projects."""
    return "." not in group or (group.endswith(".k8s.io") and not group.endswith("x-k8s.io"))


@dataclass(frozen=True)
class SwitchedObject:
    release: str  # the chart's release (catalog.versions.HelmChart.release)
    value: str  # dotted path in the release's values; a subchart's values under its name
    default: bool  # the chart's own default for it
    api_version: str
    kind: str
    template: str  # the chart file that renders it (or passes it to the operator)
    by_operator: bool = False  # the operator creates it from what the template passes on

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


SWITCHED_OBJECTS: Final[tuple[SwitchedObject, ...]] = (
    SwitchedObject(
        "gpu-operator",
        "dcgmExporter.serviceMonitor.enabled",
        True,
        "monitoring.coreos.com/v1",
        "ServiceMonitor",
        "templates/clusterpolicy.yaml",
        by_operator=True,
    ),
    SwitchedObject(
        "gpu-operator",
        "node-feature-discovery.prometheus.enable",
        False,
        "monitoring.coreos.com/v1",
        "PodMonitor",
        "charts/node-feature-discovery/templates/prometheus.yaml",
    ),
    SwitchedObject(
        "gpu-operator",
        "platform.openshift",
        False,
        "security.openshift.io/v1",
        "SecurityContextConstraints",
        "templates/readonlyfs_scc.openshift.yaml",
    ),
    SwitchedObject(
        "kuberay-operator",
        "metrics.serviceMonitor.enabled",
        False,
        "monitoring.coreos.com/v1",
        "ServiceMonitor",
        "templates/servicemonitor.yaml",
    ),
    SwitchedObject(
        "kueue",
        "enablePrometheus",
        False,
        "monitoring.coreos.com/v1",
        "ServiceMonitor",
        "templates/prometheus/monitor.yaml",
    ),
    *(
        SwitchedObject(
            "kueue",
            "enableCertManager",
            False,
            "cert-manager.io/v1",
            kind,
            f"templates/certmanager/{name}.yaml",
        )
        for name, kind in (
            ("certificate", "Certificate"),
            ("certificate-metrics", "Certificate"),
            ("certificate-visibility-server", "Certificate"),
            ("issuer", "Issuer"),
        )
    ),
    # Also rendered when KAI's chart detects OpenShift by itself (a ClusterVersion CRD), which
    # an AKS cluster never has.
    SwitchedObject(
        "kai-scheduler",
        "openshift",
        False,
        "security.openshift.io/v1",
        "SecurityContextConstraints",
        "templates/rbac/scc.yaml",
    ),
)


def chart_groups(release: str) -> tuple[str, ...]:
    """The API groups whose CRDs the release's chart ships (its subcharts' included)."""
    return tuple(group for group, owner in CRD_GROUP_RELEASES.items() if owner == release)


def value_at(values: Mapping[str, Any], dotted: str) -> object:
    """The value at a dotted path, None where any part of the path is missing."""
    node: object = values
    for key in dotted.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node
