"""Monitoring switched on, as far as the rig can show it.

On AKS, `observability.enabled` adds Azure resources (a Monitor workspace, data collection,
Managed Grafana), turns on the cluster's metrics add-on (which brings the
`azmonitoring.coreos.com` CRDs), creates the scrape objects, and changes Kueue's
Configuration, so `helm upgrade` restarts Kueue. The rig has no Azure and no Prometheus: its
stack is an existing cluster whose scrape objects are made for a Prometheus Operator
(`observability.prometheusOperator`). The rig stands in that operator's two CRDs with schemaless
ones (no operator reads the objects) and the operators' namespaces the objects go in, and
restarts Kueue with the new Configuration, as the release's upgrade does (operators.py). What it
shows: the scrape objects apply and go with the stack, and Kueue restarts under running work.
"""

from __future__ import annotations

from typing import Any, Final

from aksray.live.kube import Kube
from aksray.rehearse.rig.controlplane import apply_crd_documents
from aksray.rehearse.rig.processes import Supervisor
from catalog.versions import CHARTS, PROMETHEUS_OPERATOR_API_VERSION

STAND_IN_KINDS: Final = (("PodMonitor", "podmonitors"), ("ServiceMonitor", "servicemonitors"))


def wants_monitoring(stack: dict[str, Any]) -> bool:
    return (stack.get("observability") or {}).get("enabled") is True


def stand_in_crds() -> list[dict[str, Any]]:
    """The Prometheus Operator's PodMonitor and ServiceMonitor, without a schema."""
    group, _, version = PROMETHEUS_OPERATOR_API_VERSION.partition("/")
    return [
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {
                    "kind": kind,
                    "plural": plural,
                    "singular": kind.lower(),
                    "listKind": f"{kind}List",
                },
                "versions": [
                    {
                        "name": version,
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            }
                        },
                    }
                ],
            },
        }
        for kind, plural in STAND_IN_KINDS
    ]


def install_stand_ins(kube: Kube, supervisor: Supervisor) -> int:
    """The two CRDs, and the operators' namespaces the scrape objects go in (an existing
    cluster that runs the operators has them; the rig runs them as processes)."""
    for namespace in sorted({chart.namespace for chart in CHARTS}):
        if kube.get_or_none(f"/api/v1/namespaces/{namespace}") is None:
            kube.create(
                "/api/v1/namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            )
    return apply_crd_documents(kube, supervisor, stand_in_crds())
