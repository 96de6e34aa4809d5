"""Each error about GPU sizes and quotas names the key whose change fixes it."""

from __future__ import annotations

from pathlib import Path

from aksray.plan.checks.run import run_checks
from aksray.plan.model.plan import plan
from tests.support.harness import P
from tests.support.minimal_stack import config, minimal, run, teams

T = "scheduling.departments[0].teams[0]"


def _errors(tmp_path: Path, document: dict[str, object]) -> list[tuple[str, str]]:
    return [(e.path, e.message) for e in run_checks(plan(run(tmp_path, document))).errors]


def test_a_gpu_flavors_memory_below_one_worker_is_reported_at_that_flavors_key(
    tmp_path: Path,
) -> None:
    """GPU workers never use the cpu flavor: its memory is no fix."""
    document = minimal()
    teams(document)[0]["quota"]["a100"]["memory"] = "32Gi"  # one llm-serve worker needs 64Gi
    teams(document)[0]["quota"]["cpu"]["memory"] = "48Gi"  # more, on the cpu flavor
    errors = _errors(tmp_path, document)
    assert [path for path, _ in errors] == [f"{T}.quota.a100.memory"]


def test_an_elastic_minimum_that_does_not_fit_is_reported_at_its_minimum(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "workloads"]["llm-serve"].update(minReplicas=3, maxReplicas=3)
    errors = _errors(tmp_path, document)
    gang = [(p, m) for p, m in errors if "can never be admitted" in m]
    assert [p for p, _ in gang] == ["workloads.llm-serve.minReplicas"]
    assert gang[0][1].endswith(f"lower minReplicas to 2 or raise {T}.quota.a100.gpu")


def test_two_unlimited_quotas_on_one_pool_are_not_told_to_raise_max_count(
    tmp_path: Path,
) -> None:
    """An unlimited quota is the whole pool at any size: maxCount can never fix the sum."""
    document = minimal()
    teams(document)[0]["quota"]["a100"] = {"gpu": "unlimited"}
    teams(document).append({"name": "team-b", "quota": {"a100": {"gpu": "unlimited"}}})
    errors = _errors(tmp_path, document)
    over = [(p, m) for p, m in errors if "add up to more than pool a100" in m]
    assert [p for p, _ in over] == ["scheduling.departments[0].teams[1].quota.a100"]
    assert "raising maxCount never fixes this" in over[0][1]
    assert "raise maxCount to" not in over[0][1]


def test_a_worker_above_every_share_of_its_pools_is_reported_at_the_vm_size(
    tmp_path: Path,
) -> None:
    """Not at a quota: no quota makes a node hold it."""
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"][0]["vmSize"] = "Standard_NC8as_T4_v3"
    errors = _errors(tmp_path, document)
    assert [p for p, m in errors if "per GPU" in m] == ["cluster.gpuPools[0].vmSize"]
    assert not [p for p, m in errors if p.startswith(f"{T}.quota")]
