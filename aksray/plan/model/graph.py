"""The deploy critical path: the longest chain of resources `pulumi up` must create one after the
other.

Nodes are the recorded custom resources (components do no work of their own: the SDK already
expands a dependency on a component into its custom resources). A resource waits for:

- every URN in its `depends_on`: explicit `depends_on` and the implicit edges through Outputs it
  takes as inputs (the runner records both, as the engine receives them);
- its provider: a resource's provider reference is `<urn>::<id>`, and the id exists only once
  the provider resource is created (a Kubernetes provider exists only once the cluster's
  kubeconfig does);
- its parent, when the parent is a custom resource: a child's URN names its parent, whose
  registration completes only when it is created. Component parents add nothing.

Edge weights are estimated durations per resource type, in one table (`ESTIMATED_SECONDS`).
They are rough figures for ranking chains (typical `pulumi up` timings of an empty
subscription; a Helm release waits for its controllers to become ready), not a prediction:
AKS alone varies by minutes. What `pulumi up` waits for after a create, and for how long at
most, is read from each resource (aksray/plan/model/awaits.py): a step it awaits carries that
bound beside its estimate, and a step that awaits a run of the stack's own workload
(`pulumi.com/waitFor`, e.g. prod's model-stage copy, up to an hour) counts at its bound, the one
figure there is for it. The chain with the largest sum is the critical path; ties go to the
chain with more resources, then by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from aksray.offline.runner import RecordedResource, RunResult
from aksray.plan.model.awaits import awaited

# Estimated seconds from "create requested" to "created", by resource type token.
ESTIMATED_SECONDS: Final[dict[str, int]] = {
    "azure-native:resources:ResourceGroup": 5,
    "azure-native:containerservice:ManagedCluster": 480,
    "azure-native:containerservice:AgentPool": 240,
    "azure-native:containerservice:MaintenanceConfiguration": 10,
    "azure-native:authorization:RoleAssignment": 15,
    "azure-native:storage:StorageAccount": 30,
    "azure-native:storage:BlobServiceProperties": 5,
    "azure-native:storage:BlobContainer": 5,
    "azure-native:managedidentity:UserAssignedIdentity": 10,
    "azure-native:managedidentity:FederatedIdentityCredential": 10,
    "random:index/randomString:RandomString": 0,
    "kubernetes:helm.sh/v3:Release": 120,
    # Awaited until it completes: the KAI queue webhook wait (manifests/kai_webhook.py).
    "kubernetes:batch/v1:Job": 30,
}
PROVIDER_SECONDS: Final = 1  # `pulumi:providers:*`: configured, nothing created
KUBERNETES_OBJECT_SECONDS: Final = 2  # any other `kubernetes:*` object: one API call
OTHER_SECONDS: Final = 10  # a type not in the table


def estimated_seconds(type_token: str) -> int:
    if type_token in ESTIMATED_SECONDS:
        return ESTIMATED_SECONDS[type_token]
    if type_token.startswith("pulumi:providers:"):
        return PROVIDER_SECONDS
    if type_token.startswith("kubernetes:"):
        return KUBERNETES_OBJECT_SECONDS
    return OTHER_SECONDS


@dataclass(frozen=True)
class Step:
    resource: RecordedResource
    seconds: int  # what the step counts for: its estimate, or the bound of an awaited run
    bound: bool  # `seconds` is the bound of a run `pulumi up` awaits, not an estimate
    at_most: int | None  # the timeout `pulumi up` waits under after the create, if it waits
    until: str  # what it waits for; "" when nothing

    def to_json(self) -> dict[str, object]:
        return {
            "resource": self.resource.name,
            "seconds": self.seconds,
            "bound": self.bound,
            "atMostSeconds": self.at_most,
            "until": self.until or None,
        }


def step(resource: RecordedResource) -> Step:
    wait = awaited(resource)
    if wait is not None and wait.workload:
        return Step(resource, wait.at_most, True, wait.at_most, wait.until)
    seconds = estimated_seconds(resource.type)
    if wait is None:
        return Step(resource, seconds, False, None, "")
    return Step(resource, seconds, False, wait.at_most, wait.until)


@dataclass(frozen=True)
class CriticalPath:
    steps: tuple[Step, ...]  # first created first
    # The longest chain's estimate were every awaited run over at once: with runs on the chain,
    # the deploy takes about this much at least (another chain may be the longest then).
    runs_quick_seconds: int

    @property
    def resources(self) -> tuple[RecordedResource, ...]:
        return tuple(s.resource for s in self.steps)

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.resources]

    @property
    def estimated_seconds(self) -> int:
        """The estimates of the steps that have one."""
        return sum(s.seconds for s in self.steps if not s.bound)

    @property
    def awaited_at_most_seconds(self) -> int:
        """The bounds of the awaited runs on the chain: what they may add at most."""
        return sum(s.seconds for s in self.steps if s.bound)

    def to_json(self) -> dict[str, object]:
        return {
            "resources": self.names,
            "urns": [r.urn for r in self.resources],
            "types": [r.type for r in self.resources],
            "estimatedSeconds": self.estimated_seconds,
            "awaitedAtMostSeconds": self.awaited_at_most_seconds,
            "runsQuickSeconds": self.runs_quick_seconds,
            "steps": [s.to_json() for s in self.steps],
        }


def waits_for(resources: Iterable[RecordedResource]) -> dict[str, tuple[str, ...]]:
    """Per custom resource URN: the custom resource URNs it is created after."""
    custom = {r.urn: r for r in resources if r.custom}
    edges: dict[str, tuple[str, ...]] = {}
    for urn, resource in custom.items():
        before = set(resource.depends_on)
        if resource.provider_urn:
            before.add(resource.provider_urn)
        if resource.parent:
            before.add(resource.parent)
        edges[urn] = tuple(sorted(u for u in before if u in custom and u != urn))
    return edges


def longest_chain(
    edges: Mapping[str, tuple[str, ...]], weight: Mapping[str, int]
) -> tuple[list[str], int]:
    """The heaviest path through a DAG given as `node -> nodes it waits for`."""
    best: dict[str, tuple[int, int, str, str | None]] = {}  # node -> (sum, length, name, prev)
    # Iterative depth-first post-order: deep chains must not hit the recursion limit.
    open_nodes: set[str] = set()  # expanded, not finished: the current path
    for root in sorted(edges):
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if not expanded:
                if node in best:
                    continue
                if node in open_nodes:
                    raise ValueError(f"dependency cycle through {node}")
                open_nodes.add(node)
                stack.append((node, True))
                stack.extend((dep, False) for dep in edges[node] if dep not in best)
                continue
            choice: tuple[int, int, str, str | None] = (0, 0, "", None)
            for dep in edges[node]:
                total, length, _name, _prev = best[dep]
                choice = max(choice, (total, length, dep, dep))
            total, length, _name, prev = choice
            best[node] = (total + weight[node], length + 1, node, prev)
            open_nodes.discard(node)
    if not best:
        return [], 0
    end = max(best, key=lambda n: (best[n][0], best[n][1], n))
    chain: list[str] = []
    step: str | None = end
    while step is not None:
        chain.append(step)
        step = best[step][3]
    return chain[::-1], best[end][0]


def critical_path(result: RunResult) -> CriticalPath:
    by_urn = {r.urn: r for r in result.resources}
    edges = waits_for(result.resources)
    steps = {urn: step(by_urn[urn]) for urn in edges}
    chain, _seconds = longest_chain(edges, {urn: s.seconds for urn, s in steps.items()})
    _chain, quick = longest_chain(edges, {u: 0 if s.bound else s.seconds for u, s in steps.items()})
    return CriticalPath(tuple(steps[urn] for urn in chain), quick)


def format_duration(seconds: int) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"
