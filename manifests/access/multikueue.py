"""On each MultiKueue worker: the one account the manager acts as, what it may do, and what the
worker refuses from it (Kueue v0.19.2, `pkg/controller/admissionchecks/multikueue/`).

What Kueue's remote client does on a worker, and so what the account is granted:
- it watches Workloads and every Ray kind the manager's Kueue integrates, cluster-wide (one
  watch per kind, label-filtered by Kueue; it does not connect where one is forbidden): `list`
  and `watch` on those kinds, bound cluster-wide (read only);
- it creates, reads, updates and deletes the Workload and the Ray object of a dispatched job,
  always in the job's own namespace, patches a RayService whose Serve config changed on the
  manager (`MultiKueueRemoteSpecSync`, on by default), and updates a copy's status to open its
  preemption gate (`MultiKueueOrchestratedPreemption`): those writes are bound per namespace,
  in the namespaces of the teams that have quota in the worker, and nowhere else.
Through KubeRay a Ray object is any pod as any service account of its namespace, so the writes
never reach kube-system or a namespace of a team the worker does not serve. A
ValidatingAdmissionPolicy on the worker also refuses a Ray object from this account that does
not name its team's LocalQueue (`kueue.x-k8s.io/queue-name`, which MultiKueue copies onto the
remote object): nothing the manager sends runs outside the worker's quota.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final

from catalog.versions import KUEUE
from manifests.kueue import QUEUE_NAME_LABEL

# On each worker, in Kueue's namespace: the account the manager acts as.
MANAGER_ACCOUNT: Final = "multikueue-manager"
WORKER_ROLE: Final = "aksray-multikueue-worker"  # the writes, bound per team namespace
WORKER_READ_ROLE: Final = "aksray-multikueue-worker-read"  # the watches, cluster-wide
QUEUE_POLICY: Final = "aksray-multikueue-queue-required"
TOKEN_SECRET: Final = f"{MANAGER_ACCOUNT}-token"
# Ray kinds by the resource MultiKueue mirrors on the worker.
RAY_RESOURCES: Final = {
    "RayJob": "rayjobs",
    "RayService": "rayservices",
    "RayCluster": "rayclusters",
}
# Per Ray resource, the writes Kueue's adapter makes on the worker: create, read back, delete;
# a RayService is also patched when its Serve config changes on the manager.
_RAY_WRITES: Final = {
    "rayjobs": ("get", "create", "delete"),
    "rayservices": ("get", "create", "delete", "patch"),
    "rayclusters": ("get", "create", "delete", "update", "patch"),
}


def labels() -> dict[str, str]:
    return {"app.kubernetes.io/managed-by": "aksray", "app.kubernetes.io/part-of": "multikueue"}


def manager_user() -> str:
    """The user name the worker's API server sees the manager as."""
    return f"system:serviceaccount:{KUEUE.namespace}:{MANAGER_ACCOUNT}"


def _resources(kinds: Collection[str]) -> list[str]:
    return [RAY_RESOURCES[kind] for kind in sorted(kinds, key=list(RAY_RESOURCES).index)]


def worker_read_rules(kinds: Collection[str]) -> list[dict[str, Any]]:
    """What Kueue's remote client watches cluster-wide: its Workloads and the Ray `kinds`."""
    return [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["list", "watch"]},
        {"apiGroups": ["ray.io"], "resources": _resources(kinds), "verbs": ["list", "watch"]},
    ]


def worker_write_rules(kinds: Collection[str]) -> list[dict[str, Any]]:
    """What it writes in a served team's namespace (bound there only)."""
    rules = [
        {"apiGroups": ["ray.io"], "resources": [resource], "verbs": list(_RAY_WRITES[resource])}
        for resource in _resources(kinds)
    ]
    return [
        *rules,
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads"],
            "verbs": ["get", "create", "delete", "update", "patch"],
        },
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads/status"],
            "verbs": ["update", "patch"],
        },
    ]


def token_secret_name(rotation: str = "") -> str:
    """The manager's token Secret on a worker: a new rotation label is a new Secret (a new
    token), and the old one, deleted, takes its token with it."""
    return f"{TOKEN_SECRET}-{rotation}" if rotation else TOKEN_SECRET


def manager_account() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": MANAGER_ACCOUNT, "namespace": KUEUE.namespace, "labels": labels()},
        # The token is the Secret's; no pod runs as this account.
        "automountServiceAccountToken": False,
    }


def _role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels()},
        "rules": rules,
    }


def _binding(kind: str, role: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": role, "labels": labels()}
    if namespace is not None:
        meta["namespace"] = namespace
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [
            {"kind": "ServiceAccount", "name": MANAGER_ACCOUNT, "namespace": KUEUE.namespace}
        ],
    }


def worker_roles(kinds: Collection[str]) -> list[dict[str, Any]]:
    """The two ClusterRoles and the cluster-wide binding of the read one."""
    return [
        _role(WORKER_READ_ROLE, worker_read_rules(kinds)),
        _binding("ClusterRoleBinding", WORKER_READ_ROLE),
        _role(WORKER_ROLE, worker_write_rules(kinds)),
    ]


def namespace_binding(namespace: str) -> dict[str, Any]:
    """The writes, in one served team's namespace."""
    return _binding("RoleBinding", WORKER_ROLE, namespace)


def token_secret(rotation: str = "") -> dict[str, Any]:
    """The long-lived token Kubernetes fills in for the account (`rotation`: its label)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/service-account-token",
        "metadata": {
            "name": token_secret_name(rotation),
            "namespace": KUEUE.namespace,
            "labels": labels(),
            "annotations": {"kubernetes.io/service-account.name": MANAGER_ACCOUNT},
        },
    }


def queue_policy(kinds: Collection[str], queues: Mapping[str, str]) -> list[dict[str, Any]]:
    """A ValidatingAdmissionPolicy and its binding: a Ray object the manager's account creates
    or updates names the LocalQueue of its namespace's team (`queues`: namespace -> LocalQueue)."""
    served = ", ".join(f"'{ns}': '{queue}'" for ns, queue in sorted(queues.items()))
    label = f"object.metadata.labels['{QUEUE_NAME_LABEL}']"
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": QUEUE_POLICY, "labels": labels()},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": ["ray.io"],
                            "apiVersions": ["*"],
                            "resources": _resources(kinds),
                            "operations": ["CREATE", "UPDATE"],
                        }
                    ]
                },
                "matchConditions": [
                    {
                        "name": "from-the-multikueue-manager",
                        "expression": f"request.userInfo.username == '{manager_user()}'",
                    }
                ],
                "variables": [{"name": "queues", "expression": f"{{{served}}}"}],
                "validations": [
                    {
                        "expression": (
                            "object.metadata.namespace in variables.queues && "
                            f"has(object.metadata.labels) && '{QUEUE_NAME_LABEL}' in "
                            f"object.metadata.labels && {label} == "
                            "variables.queues[object.metadata.namespace]"
                        ),
                        "messageExpression": (
                            "'the MultiKueue manager may create a Ray object here only in the "
                            "queue of a team this worker serves: ' + "
                            "(object.metadata.namespace in variables.queues ? "
                            f"'label {QUEUE_NAME_LABEL}: ' + "
                            "variables.queues[object.metadata.namespace]"
                            " : 'no team of this worker uses namespace ' + "
                            "object.metadata.namespace)"
                        ),
                        "reason": "Forbidden",
                    }
                ],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": QUEUE_POLICY, "labels": labels()},
            "spec": {"policyName": QUEUE_POLICY, "validationActions": ["Deny"]},
        },
    ]
