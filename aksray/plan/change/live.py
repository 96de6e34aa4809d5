"""What a change kills, cuts or waits on in a running cluster: node pools and Ray workloads
(work), Kueue's quotas and finalizers (Kueue v0.19.2), and the identities pods sign in with."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from aksray.offline.runner import RunResult
from aksray.plan.change.describe import delete_wait_seconds, goes, inputs_of, label, metadata
from aksray.plan.change.model import Impact, ResourceChange
from catalog.quantities import RESOURCE_KINDS, QuantityError
from catalog.replacement import HELM_RELEASE
from scheduling.amounts import READING_ORDER, describe_amount

FINALIZER: Final = "kueue.x-k8s.io/resource-in-use"
KUEUE_GROUP: Final = "kubernetes:kueue.x-k8s.io/"
CLUSTER_QUEUE: Final = "ClusterQueue"
AGENT_POOL: Final = "azure-native:containerservice:AgentPool"
MANAGED_CLUSTER: Final = "azure-native:containerservice:ManagedCluster"
RAY_JOB: Final = "kubernetes:ray.io/v1:RayJob"
RAY_SERVICE: Final = "kubernetes:ray.io/v1:RayService"
NAMESPACE: Final = "kubernetes:core/v1:Namespace"
K8S_PROVIDER: Final = "pulumi:providers:kubernetes"


def _impact(severity: str, kind: str, change: ResourceChange, message: str) -> Impact:
    return Impact(severity, kind, change.urn, f"{label(change)}: {message}")  # type: ignore[arg-type]


def _goes_how(change: ResourceChange) -> str:
    if change.action == "delete":
        return "is deleted"
    why = ", ".join(f"{p.path} {_short(p.old)} -> {_short(p.new)}" for p in _forcing(change))
    first = "deleted first, then created again" if change.delete_before_replace else "replaced"
    return f"is {first} ({why})"


def _forcing(change: ResourceChange) -> Iterator[Any]:
    forced = {r.path for r in change.replace_reasons}
    return (p for p in change.paths if p.path in forced)


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def work_impacts(changes: Sequence[ResourceChange]) -> list[Impact]:
    found = []
    for change in changes:
        if not goes(change):
            continue
        how = _goes_how(change)
        if change.type == AGENT_POOL:
            found.append(
                _impact(
                    "warning", "work-killed", change,
                    f"{how}: every node of the pool goes and every pod on it stops (running "
                    "jobs lose their progress since their last checkpoint); to change a pool "
                    "without that, add the new pool beside it, move the quota, then remove the "
                    "old one (docs/changing.md)",
                )
            )  # fmt: skip
        elif change.type == K8S_PROVIDER:
            found.append(
                _impact(
                    "warning", "work-killed", change,
                    f"{how}: every Kubernetes object of the stack is deleted and created again "
                    "(on the cluster the new provider reaches), the running work with them",
                )
            )  # fmt: skip
        elif change.type == MANAGED_CLUSTER:
            found.append(
                _impact(
                    "warning", "work-killed", change,
                    f"{how}: the whole cluster, every node, object and job, goes with it",
                )
            )  # fmt: skip
        elif change.type == RAY_JOB:
            again = "" if change.action == "delete" else " and runs again from the start"
            found.append(
                _impact("warning", "work-killed", change, f"{how}: a running job stops{again}")
            )
        elif change.type == RAY_SERVICE:
            found.append(
                _impact(
                    "warning", "work-killed", change,
                    f"{how}: the endpoint serves nothing from the deletion until the new "
                    "RayService's Ray cluster is admitted and its replicas are ready",
                )
            )  # fmt: skip
        elif change.type == NAMESPACE:
            found.append(
                _impact(
                    "warning", "work-killed", change,
                    f"{how}: everything in it goes with it, pods, jobs, Kueue workloads and "
                    "objects the stack does not manage",
                )
            )  # fmt: skip
        elif change.type == HELM_RELEASE:
            found.append(
                _impact(
                    "warning", "operator-removed", change,
                    f"{how}: `helm uninstall` removes what the chart installed (waiting up to "
                    "its timeout); its controllers stop, and objects of its kinds are no longer "
                    "reconciled until an operator runs again",
                )
            )  # fmt: skip
    return found


def kueue_impacts(changes: Sequence[ResourceChange], new: RunResult) -> list[Impact]:
    found: list[Impact] = []
    kept_queues = [
        r.inputs
        for r in new.resources
        if r.type.startswith(KUEUE_GROUP) and r.type.endswith(":ClusterQueue")
    ]
    for change in changes:
        kind = change.type.rsplit(":", 1)[-1]
        if not change.type.startswith(KUEUE_GROUP):
            continue
        if kind == CLUSTER_QUEUE and change.action == "update":
            found += _quota_cuts(change)
        if not goes(change):
            continue
        wait = f"`pulumi up` waits {delete_wait_seconds(change) // 60} minutes for it, then fails"
        name = str(metadata(change.old_inputs).get("name", change.name))
        if kind == CLUSTER_QUEUE:
            found.append(
                _impact(
                    "warning", "finalizer-wait", change,
                    f"is deleted, and Kueue keeps it ({FINALIZER}) while any workload is "
                    f"admitted to it; {wait} (timed out waiting for the condition); before "
                    "this `pulumi up`, let the team's jobs finish or delete them, or set the "
                    "queue's stopPolicy to HoldAndDrain in an earlier one",
                )
            )  # fmt: skip
        elif kind in ("ResourceFlavor", "AdmissionCheck"):
            users = sorted(_queues_using(kept_queues, kind, name))
            if users:
                found.append(
                    _impact(
                        "error", "finalizer-wait", change,
                        f"is deleted, but ClusterQueue {', '.join(users)} of the new stack "
                        f"still uses it: Kueue keeps it ({FINALIZER}) and {wait}; remove it "
                        "from those queues in the same change",
                    )
                )  # fmt: skip
            else:
                found.append(
                    _impact(
                        "warning", "finalizer-wait", change,
                        f"is deleted; Kueue keeps it ({FINALIZER}) until no ClusterQueue uses "
                        "it, so it goes after the queues this change deletes",
                    )
                )  # fmt: skip
    return found


def _queues_using(queues: Sequence[Mapping[str, Any]], kind: str, name: str) -> Iterator[str]:
    for queue in queues:
        spec = queue.get("spec") or {}
        if kind == "ResourceFlavor":
            used = {
                flavor.get("name")
                for group in spec.get("resourceGroups") or []
                for flavor in group.get("flavors") or []
            }
        else:
            used = set(spec.get("admissionChecks") or []) | {
                rule.get("name")
                for rule in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
            }
        if name in used:
            yield str(metadata(queue).get("name"))


def _nominal(inputs: Mapping[str, Any]) -> dict[tuple[str, str], Any]:
    found = {}
    for group in (inputs.get("spec") or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for resource in flavor.get("resources") or []:
                found[(str(flavor.get("name")), str(resource.get("name")))] = resource.get(
                    "nominalQuota"
                )
    return found


def _amount(resource: str, value: Any) -> int | None:
    kind = RESOURCE_KINDS.get(resource)
    if kind is None:
        return None
    try:
        return kind.parse(value)
    except QuantityError:
        return None


def _quota_cuts(change: ResourceChange) -> list[Impact]:
    """One line per flavor whose nominal quota falls, every resource that falls on it."""
    before, after = _nominal(change.old_inputs), _nominal(change.inputs)
    cuts: dict[str, list[str]] = {}
    for (flavor, resource), old_value in sorted(before.items(), key=_gpus_first):
        was, now = _amount(resource, old_value), _amount(resource, after.get((flavor, resource), 0))
        if was is None or now is None or now >= was:
            continue
        cuts.setdefault(flavor, []).append(
            f"{describe_amount(resource, was)} -> {describe_amount(resource, now)}"
        )
    return [
        _impact(
            "warning", "quota-cut", change,
            f"nominal quota on flavor {flavor} cut ({', '.join(cut)}): Kueue evicts nothing for "
            "the cut, but what the team holds above it now counts as borrowed, which other "
            "queues of its cohort may reclaim by preemption, and its new work waits until it "
            "holds less; to free it at once, stop its work first",
        )
        for flavor, cut in cuts.items()
    ]  # fmt: skip


def _gpus_first(item: tuple[tuple[str, str], Any]) -> tuple[str, int]:
    (flavor, resource), _ = item
    return flavor, READING_ORDER.index(resource) if resource in READING_ORDER else len(
        READING_ORDER
    )


def access_impacts(changes: Sequence[ResourceChange]) -> list[Impact]:
    found = []
    for change in changes:
        gap = change.action == "delete" or change.delete_before_replace
        if not goes(change) or not gap:
            continue
        kind = change.type.rsplit(":", 1)[-1]
        inputs = inputs_of(change)
        if kind == "UserAssignedIdentity":
            message = "the team's pods lose their Azure identity and Blob access"
        elif kind == "FederatedIdentityCredential":
            message = f"pods running as {inputs.get('subject', '?')} get no Azure token"
        elif kind == "RoleAssignment":
            message = "its principal loses the role on its scope"
        elif change.type == "kubernetes:core/v1:ServiceAccount":
            message = "pods running as it lose their workload identity"
        else:
            continue
        until = "" if change.action == "delete" else " until the new one exists"
        found.append(
            _impact("warning", "access-lost", change, f"{_goes_how(change)}: {message}{until}")
        )
    return found
