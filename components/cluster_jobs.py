"""What every cluster that runs jobs holds, wired the one way it is ordered: the operators, the
teams' queues, and the Ray workloads. A one-cluster Platform and each MultiKueue worker build
it the same way; the resource names (`<name>-operators`, `-queues`, `-workloads`) are theirs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from catalog.versions import KAI_API_VERSION, KUEUE_API_VERSION, RAY_API_VERSION
from components.image_cache import ImageCache
from components.namespaces import TeamNamespaces
from components.operators import ClusterOperators
from components.queues import SchedulingQueues
from components.workloads import RayWorkloads
from settings.model import Settings

# On a MultiKueue manager: given its operators, per team what the team's ClusterQueue waits for
# (its AdmissionCheck, built with the workers it dispatches to).
AdmissionChecks = Callable[[ClusterOperators], Mapping[str, Sequence[pulumi.Resource]]]


@dataclass(frozen=True)
class ClusterJobs:
    operators: ClusterOperators
    queues: SchedulingQueues
    workloads: RayWorkloads


def cluster_jobs(
    name: str,
    settings: Settings,
    *,
    parent: pulumi.Resource,
    provider: k8s.Provider,
    namespaces: TeamNamespaces,
    storage_account: pulumi.Input[str] | None,
    huggingface_token: pulumi.Output[str] | None,
    runs_jobs: bool = True,
    image_cache: ImageCache | None = None,
    multikueue: bool = False,
    admission_checks: AdmissionChecks | None = None,
) -> ClusterJobs:
    """The operators, queues and workloads of one cluster, children of `parent`. `runs_jobs`:
    False on a MultiKueue manager, whose Ray objects run on the workers: no GPU Operator, and
    its Ray objects are MultiKueue's from creation; `admission_checks` builds its dispatch,
    which its queues come after (components/queues.py). `multikueue`: a manager or a worker of
    a stack with `multikueue`. `image_cache`: the registry every Ray pod pulls its image
    through, or None (Docker Hub)."""
    child = pulumi.ResourceOptions(parent=parent)
    # GPU Operator, KubeRay, Kueue, KAI: on the CPU pool, which the provider waits for.
    operators = ClusterOperators(
        f"{name}-operators",
        settings,
        provider=provider,
        gpu_nodes=runs_jobs,
        multikueue=multikueue,
        opts=child,
    )
    # Kueue and KAI objects need their operators' CRDs and webhooks (each release is None when
    # the stack does not install operators). KAI's queue webhook is registered after its release
    # is ready: a Job proves it serves before any KAI Queue is created.
    queues = SchedulingQueues(
        f"{name}-queues",
        settings,
        provider=provider,
        namespaces=namespaces,
        kueue=operators.release_for(KUEUE_API_VERSION),
        kai=operators.release_for(KAI_API_VERSION),
        kai_webhook=operators.kai_queue_webhook,
        admission_checks=admission_checks(operators) if admission_checks else None,
        opts=child,
    )
    # A RayJob created before Kueue's webhook serves starts unsuspended and bypasses quota:
    # every Ray object waits for its team's queues, the Kueue release (ready only once the
    # webhook serves) and the KubeRay release (its CRDs); destroy then removes it first.
    workloads = RayWorkloads(
        f"{name}-workloads",
        settings,
        provider=provider,
        namespaces=namespaces,
        storage_account=storage_account,
        queues=queues,
        huggingface_token=huggingface_token,
        dispatched=not runs_jobs,
        ready=[
            *(r for r in (operators.kueue, operators.release_for(RAY_API_VERSION)) if r),
            # A Ray pod's first pull needs the cache rule and the kubelet's right to pull.
            *(image_cache.ready if image_cache else ()),
        ],
        **({"ray_image": image_cache.image} if image_cache else {}),
        opts=child,
    )
    return ClusterJobs(operators, queues, workloads)
