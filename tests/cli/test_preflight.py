"""What `aksray plan` refuses before running the program: the settings' own problems and the
checks that need only the settings."""

from __future__ import annotations

from pathlib import Path

from aksray.cli.preflight import preflight
from aksray.offline.runner import stack_file
from tests.support.harness import stack_document, write_stack
from tests.support.minimal_stack import minimal, teams


def test_a_valid_stack_goes_on_to_the_program() -> None:
    checked = preflight(stack_file("dev"), "dev")
    assert checked.problems == ()
    assert checked.stack == "dev"
    assert checked.config.values["aks-ray-platform:location"] == "eastus2"


def test_a_setting_the_program_would_refuse_is_refused_first(tmp_path: Path) -> None:
    document = minimal()
    teams(document)[0]["quota"]["a100"]["gpu"] = -1
    checked = preflight(write_stack(tmp_path, document, "Pulumi.neg.yaml"), None)
    assert checked.stack == "neg"
    assert [p.path for p in checked.problems] == [
        "scheduling.departments[0].teams[0].quota.a100.gpu"
    ]


def test_quotas_beyond_the_pools_are_refused_first(tmp_path: Path) -> None:
    document = minimal()
    teams(document)[0]["quota"]["a100"]["gpu"] = 3
    checked = preflight(write_stack(tmp_path, document), None)
    assert [p.path for p in checked.problems] == ["cluster.gpuPools[0].maxCount"]


def test_a_workers_quota_beyond_its_pools_is_refused_first(tmp_path: Path) -> None:
    """The manager holds no quota of its own: each worker's quota is checked against that
    worker's pools before the program, at the worker's paths in the stack file."""
    document = stack_document("multiregion")
    workers = document["config"]["aks-ray-platform:multikueue"]["workers"]
    workers[1]["quota"]["team-a"]["a100"]["gpu"] = 5  # sce's pool: 4 one-GPU nodes at most
    checked = preflight(write_stack(tmp_path, document, "Pulumi.multiregion.yaml"), None)
    assert [p.path for p in checked.problems] == [
        "multikueue.workers[1].cluster.gpuPools[0].maxCount"
    ]
    (problem,) = checked.problems
    assert problem.message.startswith(
        "in worker sce: the team quotas of flavor a100 add up to more than pool a100 holds at "
        "maxCount 4"
    ), problem.message
    assert problem.message.endswith(
        "raise maxCount to 5, lower the teams' quota.a100, or set scheduling.allowOvercommit: true"
    ), problem.message
