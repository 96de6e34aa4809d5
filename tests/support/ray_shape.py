"""The Ray cluster a RayJob creates, as Ray sees it: each pod's CPUs and GPUs.

Pure (no Pulumi, no Ray), so both test environments use it: the default suite checks the
payloads' reservations against the planned RayJobs; the payload tier starts a real Ray cluster
of exactly these nodes (`ray.cluster_utils.Cluster`).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from catalog.project import PROJECT
from catalog.quantities import parse_cpu_millis
from manifests import ray
from settings.parse import parse_settings
from workloads.catalog import WORKLOADS, payload_files, requirements

STACKS = Path(__file__).resolve().parents[2] / "stacks"
GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True)
class RayNode:
    num_cpus: int
    num_gpus: int


def _ray_node(group: Mapping[str, Any]) -> RayNode:
    """KubeRay's `ray start` resources: `num-cpus` from rayStartParams, else the CPU
    limit, else the CPU request (rounded up to whole CPUs); `num-gpus` from the GPU limit."""
    params = group.get("rayStartParams", {})
    resources = group["template"]["spec"]["containers"][0]["resources"]
    limits, requests = resources.get("limits", {}), resources.get("requests", {})
    if "num-cpus" in params:
        cpus = int(params["num-cpus"])
    else:
        millis = parse_cpu_millis(str(limits.get("cpu") or requests.get("cpu") or "0"))
        cpus = -(-millis // 1000)
    gpus = int(params.get("num-gpus", limits.get(GPU_RESOURCE, 0)))
    return RayNode(cpus, gpus)


def ray_nodes(job: Mapping[str, Any]) -> tuple[RayNode, list[RayNode]]:
    """(head, workers) of the RayJob's Ray cluster."""
    cluster = job["spec"]["rayClusterSpec"]
    head = _ray_node(cluster["headGroupSpec"])
    workers = [
        _ray_node(group)
        for group in cluster.get("workerGroupSpecs", [])
        for _ in range(group["replicas"])
    ]
    return head, workers


def stack_ray_job(workload: str, stack: str = "dev") -> dict[str, Any]:
    """The workload's RayJob as the stack's program builds it, from the stack file."""
    document = yaml.safe_load((STACKS / f"Pulumi.{stack}.yaml").read_text())
    prefix = f"{PROJECT}:"
    raw = {k[len(prefix) :]: v for k, v in document["config"].items() if k.startswith(prefix)}
    settings = parse_settings(raw, stack=stack)
    entry = next(w for w in settings.workloads if w.name == workload)
    spec = WORKLOADS[workload]
    return ray.ray_job(
        spec,
        entry,
        settings.scheduling.team(entry.team),
        files=payload_files(spec),
        requirements=requirements(spec),
        hf_token=False,
        storage_account="acct",
        places=ray.blob_places(settings.workloads, entry.team),
    )


def entrypoint_argv(job: Mapping[str, Any]) -> list[str]:
    """The payload's own arguments: `python -m <module> <these>`."""
    return shlex.split(str(job["spec"]["entrypoint"]))[3:]


def fits(bundles: Sequence[Mapping[str, float]], nodes: Sequence[RayNode]) -> bool:
    """Whether the bundles fit on the nodes, first fit, largest bundle first (exact for the
    identical bundles the payloads reserve)."""
    free = [{"CPU": float(n.num_cpus), "GPU": float(n.num_gpus)} for n in nodes]
    for bundle in sorted(bundles, key=lambda b: (-b.get("GPU", 0), -b.get("CPU", 0))):
        node = next(
            (f for f in free if all(f.get(key, 0.0) >= need for key, need in bundle.items())),
            None,
        )
        if node is None:
            return False
        for key, need in bundle.items():
            node[key] -= need
    return True
