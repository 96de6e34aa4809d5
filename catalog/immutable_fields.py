"""Input changes the API refuses as an update: `pulumi up` fails at that resource, halfway.

Neither provider turns these into a replacement. pulumi-kubernetes sends the update (its preview
a server-side dry run) and the API server answers `Invalid`; azure-native sends the PUT and Azure
answers 400. Unless the program's own `replaceOnChanges` covers the path, the change stops
`pulumi up` there, after whatever ran before it.

Where each rule is read:
- `CRD`: an `x-kubernetes-validations` transition rule (one that reads `oldSelf`) of the pinned
  CRDs (Kueue v0.19.2, KubeRay v1.6.2); tests/conformance/test_immutable_fields.py reads the
  reference CRDs and finds exactly these.
- `webhook`: a validating webhook of the operator (Kueue's ClusterQueue webhook,
  `ValidateClusterQueueUpdate`; its job webhook, `jobframework.ValidateJobOnUpdate`).
- `kubernetes`: the API server's own validation (Kubernetes 1.34, pkg/apis/*/validation).
- `aks`: the AKS resource provider (`PropertyChangeNotAllowed`): settings an agent pool takes
  only when it is created (AKS documents each as set at node pool creation).
KAI's Queue has no transition rule. A rule that depends on the live object (`while_running`)
is a warning: whether it bites depends on what runs when `pulumi up` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Origin = Literal["CRD", "webhook", "kubernetes", "aks"]
KUEUE: Final = "kueue.x-k8s.io"
RAY: Final = "ray.io"
QUEUE_NAME_LABEL: Final = 'metadata.labels["kueue.x-k8s.io/queue-name"]'


@dataclass(frozen=True)
class RefusedUpdate:
    """An input path of a kind that cannot change in place."""

    group: str  # API group ("" for the core group, "azure-native" for Azure types)
    kind: str  # Kubernetes kind, or the azure-native type token's last part
    path: str  # input path; a change at or under it is refused
    message: str  # what the API answers
    origin: Origin
    source: str
    only_if_old_has: str | None = None  # refused only when the old object set this path
    only_if_old_true: str | None = None  # refused only when this path of the old object is true
    while_running: bool = False  # refused only while the object's workload runs (a warning)
    rule_at: str | None = None  # where a CRD's rule sits in its schema, when not at `path`


_KUEUE_CRD: Final = "Kueue v0.19.2 CRD x-kubernetes-validations"
_RAY_CRD: Final = "KubeRay v1.6.2 CRD x-kubernetes-validations"
_K8S: Final = "Kubernetes 1.34"
_AKS: Final = (
    "AKS: set at node pool creation (the resource provider answers PropertyChangeNotAllowed)"
)
_TOPOLOGY: Final = "spec.topologyName"
_IMMUTABLE: Final = "field is immutable"


def _kueue_crd(kind: str, path: str, message: str = _IMMUTABLE, **when: str) -> RefusedUpdate:
    return RefusedUpdate(KUEUE, kind, path, message, "CRD", _KUEUE_CRD, **when)  # type: ignore[arg-type]


def _flavor(path: str, message: str) -> RefusedUpdate:
    """ResourceFlavor's rules sit on `spec` and hold only once a topology is named."""
    return RefusedUpdate(
        KUEUE, "ResourceFlavor", path, message, "CRD", _KUEUE_CRD,
        only_if_old_has=_TOPOLOGY, rule_at="spec",
    )  # fmt: skip


def _ray(kind: str, cluster: str | None) -> tuple[RefusedUpdate, ...]:
    """KubeRay 1.6.2's transition rules: managedBy, at the top and on the embedded cluster."""
    paths = ["spec.managedBy", *([f"{cluster}.managedBy"] if cluster else [])]
    return tuple(
        RefusedUpdate(RAY, kind, path, "the managedBy field is immutable", "CRD", _RAY_CRD)
        for path in paths
    )


def _kubernetes(
    group: str, kind: str, paths: tuple[str, ...], check: str, **more: str
) -> tuple[RefusedUpdate, ...]:
    message = more.pop("message", _IMMUTABLE)
    return tuple(
        RefusedUpdate(group, kind, path, message, "kubernetes", f"{_K8S} {check}", **more)  # type: ignore[arg-type]
        for path in paths
    )


REFUSED_UPDATES: Final[tuple[RefusedUpdate, ...]] = (
    _kueue_crd("LocalQueue", "spec.clusterQueue"),
    *(
        _flavor(f"spec.{field}", f"{field} are immutable when topologyName is set")
        for field in ("nodeLabels", "tolerations")
    ),
    _flavor(_TOPOLOGY, "topologyName is immutable when topologyName is set"),
    _kueue_crd("AdmissionCheck", "spec.controllerName"),
    _kueue_crd("Topology", "spec.levels"),
    RefusedUpdate(
        KUEUE, "ClusterQueue", "spec.concurrentAdmissionPolicy", _IMMUTABLE, "webhook",
        "Kueue v0.19.2 pkg/webhooks/clusterqueue_webhook.go ValidateClusterQueueUpdate",
    ),
    *_ray("RayJob", "spec.rayClusterSpec"),
    *_ray("RayService", "spec.rayClusterConfig"),
    *_ray("RayCluster", None),
    *(
        RefusedUpdate(
            RAY, kind, QUEUE_NAME_LABEL, _IMMUTABLE, "webhook",
            "Kueue v0.19.2 pkg/controller/jobframework/validation.go ValidateJobOnUpdate "
            "(the queue name of a job that is not suspended)",
            while_running=True,
        )
        for kind in ("RayJob", "RayService")
    ),
    *_kubernetes("", "Secret", ("type",), "ValidateSecretUpdate"),
    *_kubernetes(
        "", "Secret", ("data", "immutable"), "ValidateSecretUpdate",
        message="field is immutable when `immutable` is set", only_if_old_true="immutable",
    ),
    *_kubernetes(
        "", "ConfigMap", ("data", "binaryData", "immutable"), "ValidateConfigMapUpdate",
        message="field is immutable when `immutable` is set", only_if_old_true="immutable",
    ),
    *(
        rule
        for kind in ("RoleBinding", "ClusterRoleBinding")
        for rule in _kubernetes(
            "rbac.authorization.k8s.io", kind, ("roleRef",), "ValidateRoleBindingUpdate",
            message="cannot change roleRef",
        )
    ),
    *_kubernetes(
        "batch", "Job",
        tuple(
            f"spec.{field}"
            for field in (
                "selector", "template", "completionMode", "podFailurePolicy",
                "backoffLimitPerIndex", "managedBy", "successPolicy",
            )
        ),
        "ValidateJobSpecUpdate",
    ),
    *_kubernetes(
        "scheduling.k8s.io", "PriorityClass", ("value",), "ValidatePriorityClassUpdate",
        message="may not be changed in an update.",
    ),
    *_kubernetes(
        "scheduling.k8s.io", "PriorityClass", ("preemptionPolicy",), "ValidatePriorityClassUpdate"
    ),
    *(
        RefusedUpdate(
            "azure-native", "AgentPool", field, f"Changing property '{field}' is not allowed",
            "aks", _AKS,
        )
        for field in (
            "scaleSetPriority", "scaleSetEvictionPolicy", "osType", "maxPods", "availabilityZones",
            "osDiskType", "osDiskSizeGB", "vnetSubnetID",
        )
    ),
)  # fmt: skip


def refused_updates(group: str, kind: str) -> tuple[RefusedUpdate, ...]:
    return tuple(r for r in REFUSED_UPDATES if r.group == group and r.kind == kind)
