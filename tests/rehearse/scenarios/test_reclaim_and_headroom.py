"""What `node-headroom` and `endpoint-reclaimed` play, read from the stack (their rig runs:
`aksray rehearse --stack prod --scenario node-headroom`,
tests/rehearse/test_endpoint_reclaimed.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aksray.offline.runner import PROJECT_ROOT, run_program
from aksray.rehearse.scenarios.endpoint_reclaimed import Reclaim, reclaim_plan
from aksray.rehearse.scenarios.full_node_gang import FullNode
from aksray.rehearse.scenarios.node_headroom import headroom_plan, naive_cpu
from aksray.rehearse.scenarios.sizing import NotApplicableError
from aksray.rehearse.stack import read_stack_file, stack_workloads
from settings.model import Settings

STACKS = PROJECT_ROOT / "stacks"
SERVING_BORROWS = PROJECT_ROOT / "tests" / "stacks" / "serving-borrows.yaml"


def _settings(path: Path) -> Settings:
    settings: Settings = run_program(path, stack="x").settings
    return settings


def test_node_headroom_plays_prods_h100_node_at_allocatable_over_gpus_then_the_share() -> None:
    target = headroom_plan(_settings(STACKS / "Pulumi.prod.yaml"))
    assert target == FullNode("training", "h100", 8, "Standard_ND96isr_H100_v5")
    # 94940m / 8, where 8 x 11867m > the 94515m the daemon sets leave: 7 fit, the share fits 8
    assert naive_cpu(target.vm_size, target.gpus) == 11867
    assert target.share()["cpuPerGpu"] == "11814m"


def test_node_headroom_is_not_applicable_where_kueue_would_hold_the_gang_back() -> None:
    with pytest.raises(NotApplicableError, match="less than 8 x 11867m: Kueue holds"):
        headroom_plan(_settings(SERVING_BORROWS))
    with pytest.raises(NotApplicableError, match="no GPU pool of more than one GPU per node"):
        headroom_plan(_settings(STACKS / "Pulumi.dev.yaml"))


def _reclaim(path: Path) -> Reclaim:
    entry = dict(stack_workloads(read_stack_file(path)).get("llm-serve") or {})
    return reclaim_plan(_settings(path), entry)


def test_endpoint_reclaimed_plays_the_serving_team_borrowing_from_its_lender() -> None:
    target = _reclaim(SERVING_BORROWS)
    shape = (
        target.serving.name, target.owner.name, target.flavor,
        target.replicas, target.nominal, target.owner_gpus,
    )  # fmt: skip
    assert shape == ("team-a", "team-b", "gpu", 5, 4, 4)


@pytest.mark.parametrize(
    ("stack", "reason"),
    [
        ("Pulumi.prod.yaml", "llm-serve's 2 replicas fit team serving's own 8 GPUs of a100"),
        ("Pulumi.dev.yaml", "the stack runs no endpoint"),
    ],
)
def test_endpoint_reclaimed_is_not_applicable_to_an_endpoint_on_its_own_quota(
    stack: str, reason: str
) -> None:
    with pytest.raises(NotApplicableError, match=reason):
        _reclaim(STACKS / stack)
