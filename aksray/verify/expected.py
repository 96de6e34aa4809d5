"""What the plan says a live cluster holds: the stack's scheduling objects (from the program's
offline run, the objects `pulumi up` applies), the controllers and their versions, the actions
KAI's scheduler runs and Kueue's configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from aksray.offline.render import is_kubernetes_object
from aksray.offline.runner import RunResult
from aksray.plan.model.plan import Plan
from catalog.versions import CHART_SETS, KAI_IMAGE_TAG
from manifests.helm_values import kueue_manager_config

# The kinds compared, and whether each reports an `Active` condition.
VERIFIED_KINDS: Final[dict[str, bool]] = {
    "ResourceFlavor": False,
    "Cohort": False,
    "ClusterQueue": True,
    "LocalQueue": True,
    "AdmissionCheck": True,
    "WorkloadPriorityClass": False,
    "Queue": False,  # KAI's (scheduling.run.ai)
    "ValidatingAdmissionPolicy": False,
    "ValidatingAdmissionPolicyBinding": False,
}
# What Kueue's configuration must say for the plan to hold: the fields that decide admission,
# not the deployment's addresses.
KUEUE_CHECKED_FIELDS: Final = (
    "waitForPodsReady",
    "manageJobsWithoutQueueName",
    "integrations",
    "featureGates",
)
# Where each chart's controller runs, as its chart (or, for KAI v0.17, its operator) names it,
# and the ConfigMaps read: Kueue's configuration (chart `manager-config.yaml`) and the
# configuration KAI v0.17's operator writes for the default shard's scheduler
# (`pkg/operator/operands/scheduler/resources_for_shard.go`).
KUEUE_CONFIG_MAP: Final = ("kueue-manager-config", "controller_manager_config.yaml")
KAI_CONFIG_MAP: Final = ("kai-scheduler-default", "config.yaml")


@dataclass(frozen=True)
class StackObject:
    kind: str
    api_version: str
    namespace: str | None
    name: str
    declared: Mapping[str, Any]  # the object as the program applies it

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"


# The Kubernetes provider of the stack's own cluster (a MultiKueue manager's too): the program's
# Platform `aksray`, its cluster `aksray-cluster` (components/cluster.py).
CLUSTER_PROVIDER: Final = "aksray-cluster-k8s"


def stack_objects(result: RunResult) -> list[StackObject]:
    """The stack's objects of the verified kinds in its own cluster (not a MultiKueue worker's),
    in the order the program registers them."""
    found = []
    for resource in result.resources:
        if not is_kubernetes_object(resource):
            continue
        if not (resource.provider_urn or "").endswith(f"::{CLUSTER_PROVIDER}"):
            continue
        obj = resource.inputs
        if obj.get("kind") not in VERIFIED_KINDS:
            continue
        metadata = obj.get("metadata") or {}
        found.append(
            StackObject(
                str(obj["kind"]),
                str(obj["apiVersion"]),
                metadata.get("namespace"),
                str(metadata["name"]),
                obj,
            )
        )
    return found


@dataclass(frozen=True)
class Controller:
    """A controller the plan rests on, the Deployment it runs as and the version it must be."""

    name: str
    namespace: str
    deployment: str
    version: str


def controllers(plan: Plan) -> list[Controller]:
    """Kueue, KubeRay and KAI's scheduler, and the GPU Operator where the stack installs it."""
    settings = plan.settings
    charts = CHART_SETS[settings.operators.chart_source]
    kueue, kuberay = charts.kueue, charts.kuberay
    found = [
        Controller("kueue", kueue.namespace, "kueue-controller-manager", f"v{kueue.version}"),
        Controller(
            "kuberay-operator", kuberay.namespace, "kuberay-operator", f"v{kuberay.version}"
        ),
        Controller("kai-scheduler", charts.kai.namespace, KAI_CONFIG_MAP[0], KAI_IMAGE_TAG),
    ]
    if settings.operators.install:
        gpu = charts.gpu_operator
        found.append(Controller("gpu-operator", gpu.namespace, "gpu-operator", gpu.version))
    return found


def kai_actions(plan: Plan) -> tuple[str, ...] | None:
    """The actions KAI's scheduler must run (None: the stack does not know them)."""
    return plan.registered.kai_actions


def kueue_settings(plan: Plan) -> dict[str, Any]:
    """The fields of Kueue's configuration that must hold (KUEUE_CHECKED_FIELDS)."""
    settings = plan.settings
    config = kueue_manager_config(
        metrics=settings.observability.enabled, pods_ready=settings.scheduling.pods_ready
    )
    return {key: config[key] for key in KUEUE_CHECKED_FIELDS}
