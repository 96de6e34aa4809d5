"""What the scheduling tests share: Kueue's admission model on recorded ClusterQueues, the
demo stacks' runs, and the pod shapes of the workload catalog."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from aksray.offline.runner import PROJECT_ROOT, RunResult, run_program
from catalog.quantities import parse_cpu_millis, parse_memory_bytes
from scheduling import admission
from scheduling.podsets import PodSet
from scheduling.queues import read_cluster_queue
from settings.model import Settings
from settings.parse import parse_settings
from tests.support.harness import P, mutated, planned
from workloads.spec import PodShape

GIB = 1024**3
GPU = "nvidia.com/gpu"
COVERED = ["cpu", "memory", GPU]
SCENARIOS = PROJECT_ROOT / "tests" / "stacks"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"
KAI_QUEUE = "kubernetes:scheduling.run.ai/v2:Queue"
STACKS = ("dev", "prod", "local")


def kueue_options(options: dict[str, Any]) -> dict[str, Any]:
    """The model takes the flavors' node labels; these tests hold ResourceFlavor objects."""
    flavors = options.pop("resource_flavors", None)
    if flavors is not None:
        options["flavor_labels"] = {n: f["spec"].get("nodeLabels", {}) for n, f in flavors.items()}
    return options


# The tests write ClusterQueue objects, as the builders do; the model reads them back through the
# one reader the planner uses.
def assign_flavor(requests: dict[str, int], queue: dict[str, Any], **options: Any) -> str | None:
    return admission.assign_flavor(requests, read_cluster_queue(queue), **kueue_options(options))


def assign_pod_sets(sets: list[PodSet], queue: dict[str, Any], **options: Any) -> Any:
    return admission.assign_pod_sets(sets, read_cluster_queue(queue), **kueue_options(options))


def cohort_borrowable(queues: list[dict[str, Any]], borrower: str, **options: Any) -> Any:
    typed = [read_cluster_queue(q) for q in queues]
    return admission.cohort_borrowable(typed, borrower, **options)


def preemption_reason(queue: dict[str, Any], *args: Any, **options: Any) -> str | None:
    return admission.preemption_reason(read_cluster_queue(queue), *args, **options)


@functools.cache
def scenario(name: str) -> RunResult:
    result = run_program(SCENARIOS / f"{name}.yaml")
    assert result.ok, result.problems
    return result


def settings_of(stack: str) -> Settings:
    result = scenario(stack) if (SCENARIOS / f"{stack}.yaml").exists() else planned(stack)
    settings: Settings = result.settings
    return settings


def registered(result: RunResult, type_token: str) -> dict[str, dict[str, Any]]:
    """metadata.name -> inputs of every registered object of a type."""
    return {r.inputs["metadata"]["name"]: r.inputs for r in result.by_type(type_token)}


def pod(shape: PodShape) -> dict[str, int]:
    return {
        "cpu": parse_cpu_millis(shape.cpu),
        "memory": parse_memory_bytes(shape.memory),
        GPU: shape.gpus,
    }


def totals(shape: PodShape, count: int) -> dict[str, int]:
    return {resource: amount * count for resource, amount in pod(shape).items()}


def first_team(config: dict[str, Any]) -> dict[str, Any]:
    """The first team of a stack document's config."""
    team: dict[str, Any] = config[P + "scheduling"]["departments"][0]["teams"][0]
    return team


def parse_mutated(stack: str, mutate: Callable[[dict[str, Any]], None]) -> Settings:
    """A project stack's settings after `mutate` changed its config."""
    config = mutated(stack, mutate)["config"]
    return parse_settings({k.removeprefix(P): v for k, v in config.items()}, stack=stack)
