"""Custom resources for the CRD conformance tests: the Kueue objects we create, valid as the
API server takes them, and a synthetic CRD for what no reference CRD exercises."""

from __future__ import annotations

from typing import Any

from tests.support.crd.conformance import CrdVersion, compile_crd

KUEUE = "kueue.x-k8s.io"
Manifest = dict[str, Any]


def resource_flavor(version: str = "v1beta2") -> Manifest:
    return {
        "apiVersion": f"{KUEUE}/{version}",
        "kind": "ResourceFlavor",
        "metadata": {"name": "a100"},
        "spec": {
            "nodeLabels": {"kubernetes.azure.com/agentpool": "a100"},
            "tolerations": [
                {
                    "key": "nvidia.com/gpu",
                    "operator": "Equal",
                    "value": "present",
                    "effect": "NoSchedule",
                }
            ],
        },
    }


def cluster_queue(version: str = "v1beta2") -> Manifest:
    cohort_key = "cohortName" if version == "v1beta2" else "cohort"
    return {
        "apiVersion": f"{KUEUE}/{version}",
        "kind": "ClusterQueue",
        "metadata": {"name": "team-a"},
        "spec": {
            cohort_key: "research",
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}},
            "queueingStrategy": "BestEffortFIFO",
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {"name": "cpu", "nominalQuota": "20"},
                                {"name": "memory", "nominalQuota": "200Gi"},
                                {"name": "nvidia.com/gpu", "nominalQuota": 4, "borrowingLimit": 4},
                            ],
                        }
                    ],
                }
            ],
        },
    }


def cohort(version: str = "v1beta2") -> Manifest:
    return {
        "apiVersion": f"{KUEUE}/{version}",
        "kind": "Cohort",
        "metadata": {"name": "research"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {"name": "cpu", "nominalQuota": 0},
                                {"name": "nvidia.com/gpu", "nominalQuota": 0},
                            ],
                        }
                    ],
                }
            ]
        },
    }


def local_queue(version: str = "v1beta2") -> Manifest:
    return {
        "apiVersion": f"{KUEUE}/{version}",
        "kind": "LocalQueue",
        "metadata": {"name": "team-a", "namespace": "team-a"},
        "spec": {"clusterQueue": "team-a"},
    }


def synthetic_crd(
    spec_properties: dict[str, Any],
    *,
    rules: list[dict[str, Any]] | None = None,
    spec_extra: dict[str, Any] | None = None,
    subresources: dict[str, Any] | None = None,
) -> CrdVersion:
    """A cluster-scoped kind, Thing example.com/v1, whose spec has these properties, compiled."""
    spec_schema: dict[str, Any] = {"type": "object", "properties": spec_properties}
    if rules:
        spec_schema["x-kubernetes-validations"] = rules
    spec_schema.update(spec_extra or {})
    crd = compile_crd(
        {
            "group": "example.com",
            "names": {"kind": "Thing"},
            "scope": "Cluster",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": subresources or {},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": spec_schema,
                                "status": {"type": "object"},
                            },
                        }
                    },
                }
            ],
        },
        "v1",
    )
    assert crd is not None
    return crd


def synthetic_object(spec: dict[str, Any]) -> Manifest:
    """A Thing named t with this spec."""
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t"},
        "spec": spec,
    }
