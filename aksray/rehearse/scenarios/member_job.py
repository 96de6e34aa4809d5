"""What a team member writes by hand, for the `team-members` scenario: the RayJob of
docs/teams.md (a test keeps the two the same), the ways around the queues the admission
policies refuse, and the rights a member has and has not.

Each way around is one object and who sends it: a member (a user in the team's member group)
for the Ray objects a member may create, where the admission policy is what refuses; the rig's
admin for the kinds no member may create at all (a Pod, Job, Deployment or RayCluster of
their own), where RBAC refuses the member first and the policy still refuses an identity that
RBAC lets through.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from catalog.pools import CPU_POOL_NAME, pool_node_labels
from catalog.priorities import PRIORITY_CLASSES
from catalog.versions import RAY_API_VERSION, RAY_IMAGE, RAY_VERSION
from manifests.kai import KAI_PRIORITY_LABEL, KAI_QUEUE_LABEL
from manifests.kueue import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL
from manifests.namespaces import RAY_SERVICE_ACCOUNT
from manifests.ray_pods import WORKLOAD_IDENTITY_LABEL
from settings.model import TeamSettings

EXAMPLE_JOB: Final = "my-first-job"
MEMBER: Final = "member"
ADMIN: Final = "admin"
# The first words of each policy message the scenario expects (manifests/access/admission.py).
QUEUE_REFUSED: Final = f"label {QUEUE_NAME_LABEL} must name your team's LocalQueue"
KAI_REFUSED: Final = f"label {KAI_QUEUE_LABEL} must name your team's KAI queue"
PRIORITY_REFUSED: Final = f"label {PRIORITY_CLASS_LABEL} must name a priority your team may use"
ENV_REFUSED: Final = "a container may not set NVIDIA_VISIBLE_DEVICES"
RUNTIME_REFUSED: Final = "runtimeClassName nvidia* hands a container to NVIDIA's runtime"
FRACTION_REFUSED: Final = "CDI device annotations"
GPU_REFUSED: Final = "GPUs in a team namespace come only through the team's queue"
RAYCLUSTER_REFUSED: Final = "submit a RayJob or RayService, not a RayCluster"
RBAC_REFUSED: Final = "forbidden: User"


def _container(name: str, cpu: str, memory: str, gpus: int = 0) -> dict[str, Any]:
    amounts: dict[str, str] = {"cpu": cpu, "memory": memory}
    if gpus:
        amounts["nvidia.com/gpu"] = str(gpus)
    return {
        "name": name,
        "image": str(RAY_IMAGE),
        "resources": {"requests": dict(amounts), "limits": dict(amounts)},
    }


def _pod_template(container: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        # The team's Blob identity (workload identity): its own container and the shared ones.
        "metadata": {"labels": {WORKLOAD_IDENTITY_LABEL: "true"}},
        "spec": {"serviceAccountName": RAY_SERVICE_ACCOUNT, **spec, "containers": [container]},
    }


def member_ray_job(team: TeamSettings, priority: str, name: str = EXAMPLE_JOB) -> dict[str, Any]:
    """A RayJob as a member writes it: a Ray head and one one-GPU worker, in the team's
    namespace, on its LocalQueue and KAI queue, at a priority it may use."""
    return {
        "apiVersion": RAY_API_VERSION,
        "kind": "RayJob",
        "metadata": {
            "name": name,
            "namespace": team.namespace,
            "labels": {
                QUEUE_NAME_LABEL: team.local_queue,
                PRIORITY_CLASS_LABEL: priority,
                KAI_QUEUE_LABEL: team.name,
                KAI_PRIORITY_LABEL: priority,
            },
        },
        "spec": {
            # KubeRay submits the job to the head itself (with KAI it refuses K8sJobMode).
            "submissionMode": "HTTPMode",
            "entrypoint": 'python -c "import ray; ray.init(); print(ray.cluster_resources())"',
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": 600,
            "rayClusterSpec": {
                # KubeRay's token on every request to the head; KubeRay needs the Ray version.
                "rayVersion": RAY_VERSION,
                "authOptions": {"mode": "token"},
                "headGroupSpec": {
                    "rayStartParams": {},
                    # On the CPU pool: a head never holds a GPU node's quota.
                    "template": _pod_template(
                        _container("ray-head", "1", "4Gi"),
                        nodeSelector=pool_node_labels(CPU_POOL_NAME),
                    ),
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "gpu",
                        "replicas": 1,
                        "minReplicas": 1,
                        "maxReplicas": 1,
                        "rayStartParams": {},
                        "template": _pod_template(_container("ray-worker", "4", "32Gi", gpus=1)),
                    }
                ],
            },
        },
    }


@dataclass(frozen=True)
class Bypass:
    """One way around the queues: the object, who sends it, and the words of its refusal."""

    what: str
    who: str  # MEMBER or ADMIN
    manifest: dict[str, Any]
    refused_with: str


def _changed(job: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    changed = copy.deepcopy(job)
    change(changed)
    return changed


def _worker(job: dict[str, Any]) -> dict[str, Any]:
    template: dict[str, Any] = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]
    return template


def _head(job: dict[str, Any]) -> dict[str, Any]:
    template: dict[str, Any] = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]
    return template


def not_allowed_priority(allowed: tuple[str, ...]) -> str | None:
    """The highest priority class the team may not use; None when it may use them all."""
    others = [p for p in PRIORITY_CLASSES if p not in allowed]
    return max(others, key=PRIORITY_CLASSES.__getitem__) if others else None


def _labelled(job: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    return _changed(job, lambda j: j["metadata"]["labels"].update(labels))


def ray_bypasses(
    team: TeamSettings, priority: str, other: TeamSettings | None, forbidden_priority: str | None
) -> list[Bypass]:
    """Ray objects a member may create (RBAC lets them through) that go around the queues."""
    job = member_ray_job(team, priority, name="bypass")
    device_env = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]
    fraction = {"gpu-fraction": "0.5"}
    found = [
        Bypass(
            "a RayJob without the queue label",
            MEMBER,
            _changed(job, lambda j: j["metadata"]["labels"].pop(QUEUE_NAME_LABEL)),
            QUEUE_REFUSED,
        ),
        Bypass(
            "a RayJob whose head sets NVIDIA_VISIBLE_DEVICES=all",
            MEMBER,
            _changed(job, lambda j: _head(j)["spec"]["containers"][0].update(env=device_env)),
            ENV_REFUSED,
        ),
        Bypass(
            "a RayJob whose worker runs under runtimeClassName nvidia",
            MEMBER,
            _changed(job, lambda j: _worker(j)["spec"].update(runtimeClassName="nvidia")),
            RUNTIME_REFUSED,
        ),
        Bypass(
            "a RayJob whose head asks KAI for half a GPU",
            MEMBER,
            _changed(job, lambda j: _head(j)["metadata"].update(annotations=fraction)),
            FRACTION_REFUSED,
        ),
    ]
    if other is not None:
        found += [
            Bypass(
                f"a RayJob on team {other.name}'s LocalQueue",
                MEMBER,
                _labelled(job, {QUEUE_NAME_LABEL: other.local_queue}),
                QUEUE_REFUSED,
            ),
            Bypass(
                f"a RayJob in team {other.name}'s KAI queue",
                MEMBER,
                _labelled(job, {KAI_QUEUE_LABEL: other.name}),
                KAI_REFUSED,
            ),
        ]
    if forbidden_priority is not None:
        labels = {PRIORITY_CLASS_LABEL: forbidden_priority, KAI_PRIORITY_LABEL: forbidden_priority}
        found.append(
            Bypass(
                f"a RayJob at priority {forbidden_priority}, which team {team.name} may not use",
                MEMBER,
                _labelled(job, labels),
                PRIORITY_REFUSED,
            )
        )
    return found


def _gpu_pod_spec(**extra: Any) -> dict[str, Any]:
    return {"containers": [_container("cuda", "1", "4Gi", gpus=1)], **extra}


def pod_bypasses(team: TeamSettings) -> list[Bypass]:
    """Kinds no member may create: RBAC refuses the member, the policy refuses the admin."""
    meta = {"name": "bypass", "namespace": team.namespace}
    template = {"metadata": {"labels": {"app": "bypass"}}, "spec": _gpu_pod_spec()}
    job_template = {**template, "spec": _gpu_pod_spec(restartPolicy="Never")}
    objects = {
        "a Pod asking for a GPU": ("v1", "Pod", _gpu_pod_spec()),
        "a Job asking for a GPU": ("batch/v1", "Job", {"template": job_template}),
        "a Deployment asking for a GPU": (
            "apps/v1",
            "Deployment",
            {"selector": {"matchLabels": {"app": "bypass"}}, "template": template},
        ),
    }
    found = [
        Bypass(
            what,
            who,
            {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec},
            GPU_REFUSED if who == ADMIN else RBAC_REFUSED,
        )
        for what, (api, kind, spec) in objects.items()
        for who in (MEMBER, ADMIN)
    ]
    env = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]
    no_gpu = {"containers": [{**_container("cuda", "1", "4Gi"), "env": env}]}
    found.append(
        Bypass(
            "a Pod with no GPU request but NVIDIA_VISIBLE_DEVICES=all",
            ADMIN,
            {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": no_gpu},
            ENV_REFUSED,
        )
    )
    cluster = member_ray_job(team, "train")["spec"]["rayClusterSpec"]
    ray_cluster = {"apiVersion": RAY_API_VERSION, "kind": "RayCluster", "metadata": meta}
    ray_cluster["spec"] = cluster
    found += [
        Bypass("a RayCluster of one's own", MEMBER, ray_cluster, RBAC_REFUSED),
        Bypass("a RayCluster of one's own", ADMIN, ray_cluster, RAYCLUSTER_REFUSED),
    ]
    return found


@dataclass(frozen=True)
class Right:
    """One thing a member may or may not do (a SelfSubjectAccessReview's attributes)."""

    verb: str
    resource: str
    group: str
    namespace: str
    allowed: bool
    subresource: str = ""

    @property
    def what(self) -> str:
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        group = f".{self.group}" if self.group else ""
        return f"{self.verb} {resource}{group} in {self.namespace}"

    def review(self) -> dict[str, Any]:
        attributes = {
            "verb": self.verb,
            "resource": self.resource,
            "group": self.group,
            "namespace": self.namespace,
        }
        if self.subresource:
            attributes["subresource"] = self.subresource
        return {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        }


def member_rights(team: TeamSettings, other_namespace: str) -> list[Right]:
    """What a member may do in its team's namespace, and what it may not, there or elsewhere."""
    ns = team.namespace
    return [
        Right("create", "rayjobs", "ray.io", ns, True),
        Right("delete", "rayservices", "ray.io", ns, True),
        Right("list", "workloads", "kueue.x-k8s.io", ns, True),
        Right("get", "pods", "", ns, True, subresource="log"),
        Right("create", "pods", "", ns, True, subresource="portforward"),
        Right("create", "pods", "", ns, False),
        Right("create", "rayclusters", "ray.io", ns, False),
        Right("get", "secrets", "", ns, False),
        Right("create", "pods", "", ns, False, subresource="exec"),
        Right("create", "rolebindings", "rbac.authorization.k8s.io", ns, False),
        Right("list", "rayjobs", "ray.io", other_namespace, False),
        Right("create", "rayjobs", "ray.io", other_namespace, False),
        Right("get", "secrets", "", other_namespace, False),
    ]
