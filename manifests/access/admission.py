"""The admission policies that keep every GPU in a team namespace behind the team's queue.

Two ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1, GA since Kubernetes 1.30, run by
the API server itself: no controller, no webhook) and one binding each, for every namespace
labelled `aksray.io/team`. What differs per team is not in them but on the team's Namespace,
which no team member can write (manifests/namespaces.py): its LocalQueue, its KAI queue and the
priority classes it may use, read through `namespaceObject`. So a thousand teams are still two
policies and two bindings, and adding a team changes neither.

- `aksray-team-pod-specs` (Pods, and every built-in kind that makes pods: Job, CronJob,
  Deployment, ReplicaSet, StatefulSet, DaemonSet, ReplicationController, PodTemplate): no
  container asks for an `nvidia.com/` resource, except in a pod the KubeRay operator creates (a
  Ray cluster Kueue admitted); and, whoever creates it, no container selects GPUs through the
  NVIDIA container toolkit's environment variables, no pod runs under an `nvidia*` runtime
  class, names CDI devices or asks KAI for a GPU fraction (each a GPU outside every quota).
- `aksray-team-ray` (RayJob, RayService, RayCluster, RayCronJob): a RayJob or RayService names
  its team's LocalQueue and KAI queue and a priority its team may use; only KubeRay creates
  RayClusters, nothing creates RayCronJobs (KubeRay would create RayJobs from it that nobody
  wrote); and its pod templates obey the pod rules above.

Every message says what to do instead. On UPDATE a rule whose input did not change passes:
KubeRay removing its finalizer or Kueue flipping `suspend` is never refused because a team's
priorities changed since the object was created. The CEL stays within what Kubernetes 1.33 (the
oldest version the stacks allow: AKS compiles new expressions for n-1) knows: no optional
types, no list flattening.
"""

from __future__ import annotations

from typing import Any, Final

from catalog.versions import (
    ADMISSION_API_VERSION,
    KUBERAY_OPERATOR,
    KUBERAY_OPERATOR_SERVICE_ACCOUNT,
)
from manifests.access.device_rules import (
    DEVICE_ENV,
    ENV_OK,
    NO_GPU,
    TEAMS_GUIDE,
    containers,
    template_rules,
    templates_all,
)
from manifests.kai import KAI_PRIORITY_LABEL, KAI_QUEUE_LABEL
from manifests.kueue import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL
from manifests.namespaces import (
    KAI_QUEUE_NAMESPACE_LABEL,
    LOCAL_QUEUE_NAMESPACE_LABEL,
    MANAGED_BY,
    PRIORITIES_ANNOTATION,
    PRIORITY_NAMESPACE_LABEL_PREFIX,
    TEAM_NAMESPACE_LABEL,
)

POD_SPECS_POLICY: Final = "aksray-team-pod-specs"
RAY_POLICY: Final = "aksray-team-ray"
MULTIKUEUE_MANAGER: Final = "kueue.x-k8s.io/multikueue"
RAY_KINDS: Final = ("rayjobs", "rayservices", "rayclusters", "raycronjobs")
# The identity KubeRay's controller runs as: the one that creates Ray pods and RayClusters.
KUBERAY_USER: Final = (
    f"system:serviceaccount:{KUBERAY_OPERATOR.namespace}:{KUBERAY_OPERATOR_SERVICE_ACCOUNT}"
)


def _policy(name: str, rules: list[dict[str, Any]], spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": ADMISSION_API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": dict(MANAGED_BY)},
        "spec": {
            # An expression that cannot be evaluated refuses: a policy that fails open is none.
            "failurePolicy": "Fail",
            "matchConstraints": {
                "namespaceSelector": {
                    "matchExpressions": [{"key": TEAM_NAMESPACE_LABEL, "operator": "Exists"}]
                },
                "resourceRules": rules,
            },
            **spec,
        },
    }


def kuberay_user(service_account: str | None = None) -> str:
    """The user KubeRay's operator is: its service account's (`<namespace>/<name>`; None: the
    chart's, as the stack's own release runs it)."""
    if service_account is None:
        return KUBERAY_USER
    namespace, name = service_account.split("/", 1)
    return f"system:serviceaccount:{namespace}:{name}"


def pod_specs_policy(kuberay: str = KUBERAY_USER) -> dict[str, Any]:
    """No GPU outside the queue through a Pod or any built-in kind that makes pods."""
    rules = _pod_spec_rules()
    variables = _pod_spec_variables(kuberay)
    gpu = {
        "expression": (
            "variables.ephemeral || (object.kind == 'Pod' && variables.kuberay) || "
            + templates_all(f"{containers('t')}.all(c, {NO_GPU})")
        ),
        "message": (
            "GPUs in a team namespace come only through the team's queue: submit a RayJob or "
            "RayService labelled kueue.x-k8s.io/queue-name with your team's LocalQueue "
            f"({TEAMS_GUIDE}); a Pod, Job or Deployment asking for nvidia.com/ resources would "
            "run outside every quota"
        ),
        "reason": "Forbidden",
    }
    return _policy(
        POD_SPECS_POLICY,
        rules,
        {
            "variables": variables,
            # KubeRay's pods come from templates the Ray policy held to the device rules; a
            # runtime class on one is a mutating webhook's (KAI v0.12 gives every GPU pod one;
            # v0.17 only pods that share a GPU, which the Ray policy refuses).
            "validations": [
                gpu,
                *template_rules("", "(object.kind == 'Pod' && variables.kuberay)"),
            ],
        },
    )


def _pod_spec_rules() -> list[dict[str, Any]]:
    """Every built-in kind that carries a pod template, and Pods themselves."""
    rule = {"apiVersions": ["v1"]}
    both = ["CREATE", "UPDATE"]
    return [
        # Pods at CREATE only: Kueue and KAI update KubeRay's pods (gates, labels) afterwards.
        {**rule, "apiGroups": [""], "operations": ["CREATE"], "resources": ["pods"]},
        {
            **rule,
            "apiGroups": [""],
            "operations": ["UPDATE"],
            "resources": ["pods/ephemeralcontainers"],
        },
        {
            **rule,
            "apiGroups": [""],
            "operations": both,
            "resources": ["podtemplates", "replicationcontrollers"],
        },
        {
            **rule,
            "apiGroups": ["apps"],
            "operations": both,
            "resources": ["deployments", "replicasets", "statefulsets", "daemonsets"],
        },
        {**rule, "apiGroups": ["batch"], "operations": both, "resources": ["jobs", "cronjobs"]},
    ]


def _pod_spec_variables(kuberay: str) -> list[dict[str, Any]]:
    """The pod templates of the object under review, and who is asking."""
    return [
        {
            "name": "templates",
            "expression": (
                "object.kind == 'Pod' ? [object]"
                " : object.kind == 'PodTemplate' ? [object.template]"
                " : object.kind == 'CronJob' ? [object.spec.jobTemplate.spec.template]"
                " : has(object.spec.template) ? [object.spec.template] : []"
            ),
        },
        {"name": "kuberay", "expression": f"request.userInfo.username == '{kuberay}'"},
        # Debug containers added to a running pod: only their environment matters.
        {
            "name": "ephemeral",
            "expression": (
                "has(request.subResource) && request.subResource == 'ephemeralcontainers'"
            ),
        },
    ]


def _label_unchanged(key: str) -> str:
    return (
        f"('{key}' in variables.oldLabels && '{key}' in variables.labels"
        f" && variables.oldLabels['{key}'] == variables.labels['{key}'])"
    )


def _namespace_value(label: str) -> str:
    return f"('{label}' in variables.ns ? variables.ns['{label}'] : '<unset>')"


def _queue_rule(label: str, namespace_label: str, what: str) -> dict[str, Any]:
    return {
        "expression": (
            f"!variables.topLevel || {_label_unchanged(label)} || ('{label}' in variables.labels"
            f" && '{namespace_label}' in variables.ns"
            f" && variables.labels['{label}'] == variables.ns['{namespace_label}'])"
        ),
        "messageExpression": (
            f"'label {label} must name your team\\'s {what}: {label}: ' + "
            f"{_namespace_value(namespace_label)} + ' (without it, or with another team\\'s, "
            f"the object would run outside your quota; {TEAMS_GUIDE})'"
        ),
        "reason": "Forbidden",
    }


def _priority_rule() -> dict[str, Any]:
    label, kai = PRIORITY_CLASS_LABEL, KAI_PRIORITY_LABEL
    allowed = f"('{PRIORITY_NAMESPACE_LABEL_PREFIX}' + variables.labels['{label}']) in variables.ns"
    same_for_kai = (
        f"(!('{kai}' in variables.labels)"
        f" || variables.labels['{kai}'] == variables.labels['{label}'])"
    )
    annotations = "namespaceObject.metadata.annotations"
    return {
        "expression": (
            f"!variables.topLevel || ({_label_unchanged(label)} && "
            f"(!('{kai}' in variables.labels) || {_label_unchanged(kai)})) || "
            f"('{label}' in variables.labels && {allowed} && {same_for_kai})"
        ),
        "messageExpression": (
            f"'label {label} must name a priority your team may use ('"
            f" + (has({annotations}) && '{PRIORITIES_ANNOTATION}' in {annotations}"
            f" ? {annotations}['{PRIORITIES_ANNOTATION}'] : '<none>')"
            f" + '), and label {kai}, if set, the same one'"
        ),
        "reason": "Forbidden",
    }


def _ray_variables(kuberay: str) -> list[dict[str, str]]:
    submitter = (
        "(object.kind == 'RayJob' && has(object.spec.submitterPodTemplate)"
        " ? [object.spec.submitterPodTemplate] : [])"
    )
    workers = (
        "(size(variables.clusters) == 1 && has(variables.clusters[0].workerGroupSpecs)"
        " ? variables.clusters[0].workerGroupSpecs.map(w, w.template) : [])"
    )
    return [
        {"name": "kuberay", "expression": f"request.userInfo.username == '{kuberay}'"},
        {"name": "ns", "expression": "namespaceObject.metadata.labels"},
        {
            "name": "labels",
            "expression": "has(object.metadata.labels) ? object.metadata.labels : {}",
        },
        {
            "name": "oldLabels",
            "expression": (
                "request.operation == 'UPDATE' && has(oldObject.metadata.labels)"
                " ? oldObject.metadata.labels : {}"
            ),
        },
        {"name": "topLevel", "expression": "object.kind in ['RayJob', 'RayService']"},
        {
            "name": "specChanged",
            "expression": "request.operation != 'UPDATE' || object.spec != oldObject.spec",
        },
        {
            "name": "clusters",
            "expression": (
                "object.kind == 'RayJob' ? (has(object.spec.rayClusterSpec)"
                " ? [object.spec.rayClusterSpec] : [])"
                " : object.kind == 'RayService' ? (has(object.spec.rayClusterConfig)"
                " ? [object.spec.rayClusterConfig] : [])"
                " : object.kind == 'RayCluster' ? [object.spec] : []"
            ),
        },
        {
            "name": "templates",
            "expression": (
                f"variables.clusters.map(c, c.headGroupSpec.template) + {workers} + {submitter}"
            ),
        },
    ]


def _refuse(expression: str, message: str) -> dict[str, Any]:
    return {"expression": expression, "message": message, "reason": "Forbidden"}


def _ray_object_rules(changed: str) -> list[dict[str, Any]]:
    """What a Ray object itself may be: no RayCronJob, KubeRay's own RayClusters, the team's
    queues and priorities, no other manager."""
    return [
        _refuse(
            "request.operation != 'CREATE' || object.kind != 'RayCronJob'",
            "RayCronJobs are not queued: KubeRay would create RayJobs from it that no one "
            "submitted; submit each RayJob to your team's LocalQueue instead",
        ),
        _refuse(
            "request.operation != 'CREATE' || object.kind != 'RayCluster' || variables.kuberay",
            "submit a RayJob or RayService, not a RayCluster: KubeRay creates its cluster "
            "once Kueue admits it; a RayCluster of your own would run outside the queue",
        ),
        _queue_rule(QUEUE_NAME_LABEL, LOCAL_QUEUE_NAMESPACE_LABEL, "LocalQueue"),
        _queue_rule(KAI_QUEUE_LABEL, KAI_QUEUE_NAMESPACE_LABEL, "KAI queue"),
        _priority_rule(),
        _refuse(
            f"{changed} || !has(object.spec.managedBy)"
            f" || object.spec.managedBy == '{MULTIKUEUE_MANAGER}'",
            "spec.managedBy hands the object to a controller other than KubeRay and "
            "Kueue: leave it out",
        ),
    ]


def _ray_template_rules(changed: str) -> list[dict[str, Any]]:
    """What the pods of a Ray object may be: no priority or queue of their own, the device
    rules, none in the autoscaler's env, no GPU in a submitter."""
    kai_queue = (
        f"!has(t.metadata) || !has(t.metadata.labels) || !('{KAI_QUEUE_LABEL}' in "
        f"t.metadata.labels) || ('{KAI_QUEUE_NAMESPACE_LABEL}' in variables.ns && "
        f"t.metadata.labels['{KAI_QUEUE_LABEL}'] == variables.ns['{KAI_QUEUE_NAMESPACE_LABEL}'])"
    )
    return [
        _refuse(
            f"{changed} || " + templates_all("!has(t.spec.priorityClassName)"),
            "leave priorityClassName out of pod templates: the priority comes from the "
            f"label {PRIORITY_CLASS_LABEL} on the RayJob or RayService",
        ),
        {
            "expression": f"{changed} || " + templates_all(kai_queue),
            "messageExpression": (
                f"'a pod template may name only your team\\'s KAI queue ({KAI_QUEUE_LABEL}: ' "
                f"+ {_namespace_value(KAI_QUEUE_NAMESPACE_LABEL)} + '), or leave it out'"
            ),
            "reason": "Forbidden",
        },
        *template_rules(changed),
        _refuse(
            f"{changed} || variables.clusters.all(c, !has(c.autoscalerOptions)"
            f" || !has(c.autoscalerOptions.env) || c.autoscalerOptions.env.all(e, {ENV_OK}))",
            f"the Ray autoscaler's env may not set {', '.join(DEVICE_ENV)}: they select "
            "GPUs without requesting them",
        ),
        _refuse(
            f"{changed} || object.kind != 'RayJob' || !has(object.spec.submitterPodTemplate)"
            f" || {containers('object.spec.submitterPodTemplate')}.all(c, {NO_GPU})",
            "a RayJob's submitter pod asks for no GPU (it only submits the job): put GPUs "
            "in a worker group, which Kueue admits with the rest of the gang",
        ),
    ]


def ray_policy(kuberay: str = KUBERAY_USER) -> dict[str, Any]:
    """Ray objects: the team's queues and priorities, KubeRay's own RayClusters, and pod
    templates that obey the device rules. A rule on what an UPDATE did not change passes."""
    rules = [
        {
            "apiGroups": ["ray.io"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": list(RAY_KINDS),
        }
    ]
    changed = "!variables.specChanged"
    validations = [*_ray_object_rules(changed), *_ray_template_rules(changed)]
    spec = {"variables": _ray_variables(kuberay), "validations": validations}
    return _policy(RAY_POLICY, rules, spec)


def policy_binding(policy: str) -> dict[str, Any]:
    """Binds a policy with Deny: a request that breaks a rule is refused with its message."""
    return {
        "apiVersion": ADMISSION_API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": f"{policy}-binding", "labels": dict(MANAGED_BY)},
        "spec": {"policyName": policy, "validationActions": ["Deny"]},
    }


def admission_policies(kuberay: str = KUBERAY_USER) -> list[dict[str, Any]]:
    """Both policies, then their bindings."""
    policies = [pod_specs_policy(kuberay), ray_policy(kuberay)]
    return [*policies, *(policy_binding(p["metadata"]["name"]) for p in policies)]
