"""node-headroom: one GPU node with its daemon sets' stand-ins; the training gang of all its GPUs,
each worker asking node allocatable / GPUs (the share that leaves the daemon sets no room, which
`aksray plan` refuses), is admitted by Kueue and bound by no one; asking one GPU's share of what
the daemon sets leave (scheduling/nodes.py), the same gang binds whole on the same node.

It shows on the real Kueue and KAI what a real AKS node would do with such an ask: Kueue admits
on quota, KAI finds room for one worker fewer than the node has GPUs beside the daemon sets'
requests, so the gang (all or nothing) waits until the pod-readiness timeout evicts it. Not
applicable where no pool has more than one GPU per node, or where no team's quota admits the
larger gang.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from aksray.rehearse.scenarios.context import LONG_RUN_S, Context, all_off, job
from aksray.rehearse.scenarios.full_node_gang import FullNode, full_node_plan, gpu_nodes_of
from aksray.rehearse.scenarios.sizing import TRAINING, NotApplicableError, queues
from aksray.rehearse.scenarios.workload_state import admitted, pod_count, running
from catalog.quantities import format_cpu
from scheduling.admission import admissible
from scheduling.nodes import daemon_set_requests, gpu_share, node_allocatable

if TYPE_CHECKING:
    from settings.model import Settings

# How long a gang that cannot bind is watched (well below the rig's pod-readiness timeout).
UNBOUND_WATCH_S: Final = 25.0


def naive_cpu(vm_size: str, gpus: int) -> int:
    """Node allocatable / GPUs: the share that forgets the daemon sets."""
    return node_allocatable(vm_size)["cpu"] // gpus


def headroom_plan(settings: Settings) -> FullNode:
    """The full-node target, where the naive ask differs from the share and Kueue admits it."""
    target = full_node_plan(settings)
    naive = naive_cpu(target.vm_size, target.gpus)
    if (
        target.gpus * naive
        <= node_allocatable(target.vm_size)["cpu"] - daemon_set_requests(target.vm_size)["cpu"]
    ):
        raise NotApplicableError(
            f"{target.gpus} workers of {naive}m fit a {target.vm_size} node beside its daemon sets"
        )
    room = admissible(queues(settings), target.team, target.pool).get("cpu", 0)
    if room < target.gpus * naive:
        raise NotApplicableError(
            f"team {target.team}'s quota admits {format_cpu(room)} CPU on {target.pool}, less "
            f"than {target.gpus} x {naive}m: Kueue holds such a gang back before any node"
        )
    return target


def play(ctx: Context) -> None:
    target = headroom_plan(ctx.settings)
    share = gpu_share(target.vm_size)
    naive = naive_cpu(target.vm_size, target.gpus)
    ctx.set_nodes(target.pool, 1)
    ctx.set_run_time(TRAINING, LONG_RUN_S)
    pods = pod_count(ctx.settings, TRAINING, target.gpus)
    section = all_off(ctx.stack_workloads)
    for run, cpu in (("rehearse-1", naive), ("rehearse-2", share["cpu"])):
        section[TRAINING] = job(
            ctx.stack_workloads, TRAINING, enabled=True, team=target.team, priority="train",
            workers=target.gpus, run=run, **{**target.share(), "cpuPerGpu": format_cpu(cpu)},
        )  # fmt: skip
        ctx.apply(section, f"cpuPerGpu {format_cpu(cpu)}")
        if run == "rehearse-1":
            _over_share(ctx, target, naive)
    ran = ctx.wait(
        f"{TRAINING} with {format_cpu(share['cpu'])} per GPU to run on the one node",
        running(TRAINING, pods),
    )
    nodes = gpu_nodes_of(ctx.observer.last, TRAINING) if ran and ctx.observer.last else []
    ctx.expect(
        f"asking one GPU's share ({format_cpu(share['cpu'])}), all {target.gpus} workers bind "
        "on the node beside its daemon sets",
        ran and len(nodes) == target.gpus and len(set(nodes)) == 1,
        f"{TRAINING}: GPU workers bound on {sorted(nodes)}; {ctx.why_waiting(TRAINING)}",
    )


def _over_share(ctx: Context, target: FullNode, naive: int) -> None:
    """The gang asking allocatable / GPUs: admitted, and no worker bound while watched."""
    got = ctx.wait(f"{TRAINING} to be admitted on {target.pool}", admitted(TRAINING), 120)
    ctx.expect(
        f"Kueue admits the gang asking {format_cpu(naive)} per GPU (on quota)",
        got,
        ctx.why_waiting(TRAINING),
    )
    ctx.observer.hold(UNBOUND_WATCH_S)  # a pod once bound stays bound: the last sample says
    last = ctx.observer.last
    bound = len(gpu_nodes_of(last, TRAINING)) if last is not None else 0
    ctx.expect(
        f"asking {format_cpu(naive)} per GPU (node allocatable / {target.gpus}), no worker "
        f"binds in {UNBOUND_WATCH_S:.0f}s: {target.gpus - 1} fit beside the daemon sets, and a "
        "gang binds whole or not at all",
        got and last is not None and bound == 0,
        f"{bound} GPU workers bound",
    )
