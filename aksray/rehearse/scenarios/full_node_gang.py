"""The full-node scenario: a gang of all a node's GPUs is admitted on its team's quota and bound
on one node of the pool.

It proves on the real Kueue and scheduler what scheduling/workers.py computes: GPU workers ask
no more than a GPU's share of the node, so a team's quota of N GPUs admits N workers without
borrowing CPU or memory, and one node of N GPUs holds all N (none stranded). The workers ask the
most the plan lets them, exactly one GPU's share (`cpuPerGpu` and `memoryPerGpu`), and every GPU
node runs the stand-ins of its daemon sets with their requests (aksray/rehearse/rig/nodes.py):
the last worker binds only if the share left the daemon sets their room. It plays on the
stack's GPU pool with the most GPUs per node (an 8-GPU ND96 where the stack has one), with the
training job in a team whose quota (plus what it may borrow) covers the whole node; elsewhere it
is not applicable and says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from aksray.rehearse import objects as o
from aksray.rehearse.scenarios.context import LONG_RUN_S, Context, all_off, job
from aksray.rehearse.scenarios.sizing import (
    TRAINING,
    NotApplicableError,
    admissible_gpus,
    bindable_gpus,
    gpu_flavors,
    require_fit,
)
from aksray.rehearse.scenarios.workload_state import bound_pods, pod_count, running
from catalog.quantities import format_cpu, format_memory
from scheduling.nodes import gpu_share

if TYPE_CHECKING:
    from aksray.rehearse.record import Sample
    from settings.model import Settings


@dataclass(frozen=True)
class FullNode:
    team: str
    pool: str
    gpus: int  # the node's GPUs: the gang's workers, one GPU each
    vm_size: str

    def share(self) -> dict[str, str]:
        """The most each worker may ask per GPU: one GPU's share of the node."""
        share = gpu_share(self.vm_size)
        return {
            "cpuPerGpu": format_cpu(share["cpu"]),
            "memoryPerGpu": format_memory(share["memory"]),
        }


def full_node_plan(settings: Settings) -> FullNode:
    """The pool with the most GPUs per node (2 or more) that some team can fill with one gang."""
    pools = sorted(
        (p for p in settings.cluster.gpu_pools if p.gpus_per_node > 1),
        key=lambda p: -p.gpus_per_node,
    )
    if not pools:
        raise NotApplicableError("the stack has no GPU pool of more than one GPU per node")
    for pool in pools:
        require_fit(settings, pool.name, TRAINING)
        for team in settings.scheduling.teams:
            if pool.name not in gpu_flavors(settings, team):
                continue
            if gpu_flavors(settings, team)[0] != pool.name:
                continue  # Kueue would try an earlier flavor of the team first
            if admissible_gpus(settings, team, pool.name) >= pool.gpus_per_node:
                return FullNode(team.name, pool.name, pool.gpus_per_node, pool.vm_size)
    biggest = pools[0]
    raise NotApplicableError(
        f"no team's quota (with what it may borrow) covers a whole {biggest.vm_size} node "
        f"({biggest.gpus_per_node} GPUs) of pool {biggest.name} as its first GPU flavor; "
        f"bindable: {bindable_gpus(settings, biggest.name)} GPUs"
    )


def gpu_nodes_of(sample: Sample, name: str) -> list[str]:
    """The node of each bound GPU worker pod of the workload."""
    return [str(pod["spec"]["nodeName"]) for pod in bound_pods(sample, name) if o.pod_gpus(pod) > 0]


def play(ctx: Context) -> None:
    """Submit the training job with one worker per GPU of a node; it must be admitted and all
    its GPU workers bound on one node."""
    target = full_node_plan(ctx.settings)
    section = all_off(ctx.stack_workloads)
    section[TRAINING] = job(
        ctx.stack_workloads, TRAINING, enabled=True, team=target.team, priority="train",
        workers=target.gpus, run="rehearse-1", **target.share(),
    )  # fmt: skip
    ctx.notes.append(
        f"each {TRAINING} worker asks one GPU's share of a {target.vm_size} node "
        f"({', '.join(f'{k} {v}' for k, v in target.share().items())}), beside the stand-ins "
        "of the node's daemon sets"
    )
    ctx.set_run_time(TRAINING, LONG_RUN_S)
    ctx.apply(section, "full-node")
    pods = pod_count(ctx.settings, TRAINING, target.gpus)
    ran = ctx.wait(
        f"{TRAINING} of {target.team} to run {target.gpus} GPU workers on pool {target.pool}",
        running(TRAINING, pods),
    )
    ctx.expect(
        f"a gang of all {target.gpus} GPUs of a {target.pool} node is admitted and bound",
        ran,
        f"{TRAINING} never ran; {ctx.why_waiting(TRAINING)}",
    )
    if not ran or ctx.observer.last is None:
        return
    nodes = gpu_nodes_of(ctx.observer.last, TRAINING)
    ctx.expect(
        f"all {target.gpus} GPU workers on one node",
        len(nodes) == target.gpus and len(set(nodes)) == 1,
        f"GPU workers bound on {sorted(nodes)}",
    )
