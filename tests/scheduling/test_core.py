"""The scheduling core: one amounts type, the typed queues, and Kueue's admission over them.

What the program records must be what the core computed (for every shipped, test and golden
stack), and the admission model keeps Kueue's invariants for any quota (hypothesis).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from aksray.offline.runner import PROJECT_ROOT, RunResult, run_program
from aksray.plan.model.plan import CLUSTER_QUEUE, registered
from catalog.quantities import GPU_RESOURCE, RESOURCE_KEYS, RESOURCE_TABLE, RESOURCES
from catalog.versions import KUEUE
from catalog.vm_sizes import VM_SIZES
from scheduling.admission import (
    KUEUE_VERSION,
    Inadmissible,
    assign_pod_sets,
    cohort_borrowable,
    headroom,
)
from scheduling.amounts import Amounts
from scheduling.nodes import gpu_share
from scheduling.podsets import PodSet
from scheduling.queues import (
    TEAM_PREEMPTION,
    FlavorQuota,
    ResourceGroup,
    ResourceQuota,
    TeamQueue,
    read_cluster_queue,
    team_queues,
)
from scheduling.workers import fits_share, minimum_per_gpu, worker_requests
from tests.support.harness import STACKS, planned
from workloads.catalog import WORKLOADS

GPU = GPU_RESOURCE
TEST_STACKS = sorted((PROJECT_ROOT / "tests" / "stacks").glob("*.yaml"))


def _recorded_and_computed(result: RunResult) -> tuple[dict[str, TeamQueue], dict[str, TeamQueue]]:
    recorded = {
        str(r.inputs["metadata"]["name"]): read_cluster_queue(r.inputs)
        for r in result.resources
        if r.type == CLUSTER_QUEUE
    }
    return recorded, team_queues(result.settings)


@pytest.mark.parametrize("stack", STACKS)
def test_every_recorded_queue_of_a_shipped_stack_is_the_computed_one(stack: str) -> None:
    """The shipped stacks are also the golden stacks (tests/golden/<stack>)."""
    result = planned(stack)
    assert result.ok, result.problems
    recorded, computed = _recorded_and_computed(result)
    assert recorded == computed
    assert set(recorded) == {t.name for t in result.settings.scheduling.teams}


@pytest.mark.parametrize("path", TEST_STACKS, ids=lambda p: Path(p).stem)
def test_every_recorded_queue_of_a_test_stack_is_the_computed_one(path: Path) -> None:
    result = run_program(path)
    assert result.ok, result.problems
    recorded, computed = _recorded_and_computed(result)
    assert recorded == computed and recorded


def test_the_planner_reads_the_recorded_queues_through_the_one_reader() -> None:
    reg = registered(planned("prod"))
    assert reg.queues == team_queues(planned("prod").settings)


def test_the_model_is_stamped_with_the_kueue_it_installs() -> None:
    """A Kueue upgrade must revisit the model (admission, borrowing, preemption reasons)."""
    assert f"v{KUEUE.version}" == KUEUE_VERSION


def test_amounts_are_one_type_in_one_order_with_one_formatter() -> None:
    share = Amounts.of(gpu=1, cpu=11_870, memory=230_000 * 2**20)
    assert list(share) == list(RESOURCES) == [kind.name for kind in RESOURCE_TABLE]
    assert share.quantities() == {"cpu": "11870m", "memory": "230000Mi", GPU: 1}
    assert share.describe() == "1 GPU, 11.87 CPU, 224.6Gi"
    assert share.times(8) == Amounts.of(gpu=8, cpu=94_960, memory=8 * 230_000 * 2**20)
    assert Amounts.parse({"cpu": "500m", "memory": "1Gi"}) == Amounts.of(cpu=500, memory=2**30)
    assert Amounts.of(cpu=12_000, gpu=1).copies_in(share.times(8)) == 7
    assert {RESOURCE_KEYS[r] for r in RESOURCES} == {"cpu", "memory", "gpu"}
    with pytest.raises(KeyError):
        Amounts({"ephemeral-storage": 1})
    with pytest.raises(AttributeError):
        share._values = ()


# -- invariants of the admission model, for any quotas -----------------------------------------
_amount = st.integers(min_value=0, max_value=64)
_limit = st.one_of(st.none(), st.integers(min_value=0, max_value=64))


@st.composite
def _queue(draw: st.DrawFn, name: str) -> TeamQueue:
    quotas = []
    for resource in RESOURCES:
        nominal = draw(_amount)
        lend = draw(_limit)
        quotas.append(
            (
                resource,
                ResourceQuota(nominal, draw(_limit), None if lend is None else min(lend, nominal)),
            )
        )
    flavor = FlavorQuota("gpu", tuple(quotas))
    return TeamQueue(
        name,
        "dept",
        name,
        "BestEffortFIFO",
        (ResourceGroup(RESOURCES, (flavor,)),),
        TEAM_PREEMPTION,
    )


@st.composite
def _cohort(draw: st.DrawFn) -> list[TeamQueue]:
    size = draw(st.integers(min_value=1, max_value=4))
    return [draw(_queue(f"team-{i}")) for i in range(size)]


@settings(max_examples=150, deadline=None)
@given(cohort=_cohort(), gpus=st.integers(0, 200), cpu=st.integers(0, 200), count=st.integers(1, 8))
def test_admitted_never_exceeds_quota_plus_borrowable(
    cohort: list[TeamQueue], gpus: int, cpu: int, count: int
) -> None:
    queue = cohort[0]
    lendable = cohort_borrowable(cohort, queue.name)
    pods = PodSet("workers", count, {GPU: gpus, "cpu": cpu})
    try:
        assign_pod_sets([pods], queue, borrowable=lendable)
    except Inadmissible:
        return
    nominal = queue.flavors[0]
    for resource, wanted in pods.total.items():
        quota = nominal.quota(resource)
        assert quota is not None
        borrow = lendable.get(("gpu", resource), 0)
        if quota.borrowing_limit is not None:
            borrow = min(borrow, quota.borrowing_limit)
        assert wanted <= quota.nominal + borrow
        assert wanted <= headroom(queue, lendable)[("gpu", resource)]


@settings(max_examples=150, deadline=None)
@given(cohort=_cohort())
def test_a_cohort_never_lends_more_than_its_members_hold(cohort: list[TeamQueue]) -> None:
    for borrower in cohort:
        lendable = cohort_borrowable(cohort, borrower.name)
        for resource in RESOURCES:
            others = sum(q.nominal("gpu")[resource] for q in cohort if q is not borrower)
            assert 0 <= lendable.get(("gpu", resource), 0) <= others


def test_a_lending_limit_keeps_the_rest_for_the_owner() -> None:
    owner = TeamQueue(
        "owner", "dept", "owner", "BestEffortFIFO",
        (ResourceGroup(RESOURCES, (FlavorQuota("gpu", ((GPU, ResourceQuota(8, None, 3)),)),)),),
        TEAM_PREEMPTION,
    )  # fmt: skip
    borrower = TeamQueue(
        "borrower", "dept", "borrower", "BestEffortFIFO",
        (ResourceGroup(RESOURCES, (FlavorQuota("gpu", ((GPU, ResourceQuota(0, None, None)),)),)),),
        TEAM_PREEMPTION,
    )  # fmt: skip
    assert cohort_borrowable([owner, borrower], "borrower") == {("gpu", GPU): 3}
    used = {"owner": {("gpu", GPU): 6}}
    assert cohort_borrowable([owner, borrower], "borrower", usage=used) == {("gpu", GPU): 2}


_GPU_SIZES = sorted(name for name, size in VM_SIZES.items() if size.gpus)
_GPU_WORKLOADS = sorted(name for name, spec in WORKLOADS.items() if spec.gpu_group is not None)


@settings(max_examples=200, deadline=None)
@given(
    vm_size=st.sampled_from(_GPU_SIZES),
    workload=st.sampled_from(_GPU_WORKLOADS),
    nodes=st.integers(1, 16),
    data=st.data(),
)
def test_an_n_gpu_quota_admits_an_n_gpu_gang_on_every_size(
    vm_size: str, workload: str, nodes: int, data: st.DataObject
) -> None:
    """N GPUs of quota on a pool come with N GPU shares of CPU and memory (as the queues fill
    them in), which hold N workers of any shipped workload whose minimum fits the share: the
    gang is admitted without borrowing, and N + 1 workers are not."""
    spec = WORKLOADS[workload]
    assume(fits_share(minimum_per_gpu(spec), vm_size))
    gpus = data.draw(st.integers(1, VM_SIZES[vm_size].gpus * nodes), label="quota GPUs")
    quota = gpu_share(vm_size).times(gpus)
    flavor = FlavorQuota("pool", tuple((r, ResourceQuota(quota[r])) for r in RESOURCES))
    queue = TeamQueue(
        "team", None, "team", "BestEffortFIFO", (ResourceGroup(RESOURCES, (flavor,)),),
        TEAM_PREEMPTION,
    )  # fmt: skip
    worker = dict(worker_requests(spec).nonzero())
    assert assign_pod_sets([PodSet("gpu", gpus, worker)], queue) == [dict.fromkeys(worker, "pool")]
    with pytest.raises(Inadmissible):
        assign_pod_sets([PodSet("gpu", gpus + 1, worker)], queue)
