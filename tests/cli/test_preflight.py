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


def test_a_judgement_of_valid_settings_comes_with_the_settings_checks(tmp_path: Path) -> None:
    """Every problem at once: a setting that parses but cannot be deployed (a pinned patch
    version) is refused together with quotas beyond the pools, not one run after the other."""
    document = minimal()
    document["config"]["aks-ray-platform:cluster"]["kubernetesVersion"] = "1.35.1"
    teams(document)[0]["quota"]["a100"]["gpu"] = 3
    checked = preflight(write_stack(tmp_path, document), None)
    assert [p.path for p in checked.problems] == [
        "cluster.kubernetesVersion",
        "cluster.gpuPools[0].maxCount",
    ]


def test_a_parse_error_is_not_judged_further(tmp_path: Path) -> None:
    """A model that did not parse is not checked: its defaults would give false errors."""
    document = minimal()
    teams(document)[0]["quota"]["a100"]["gpu"] = 3
    document["config"]["aks-ray-platform:cluster"]["tier"] = "Gold"
    checked = preflight(write_stack(tmp_path, document), None)
    assert [p.path for p in checked.problems] == ["cluster.tier"]


def test_ten_thousand_teams_hear_of_the_role_assignments_and_the_quota_at_once(
    tmp_path: Path,
) -> None:
    """Teams enough for more Blob role assignments than Azure allows (counted by the stack's
    own formula), each with a GPU of quota on a pool of two: both errors in one run."""
    from catalog.azure import MAX_ROLE_ASSIGNMENTS_PER_SUBSCRIPTION
    from settings.blob_access import blob_grants

    document = minimal()
    count = 1
    while len(blob_grants([f"t{i}" for i in range(count)], ("datasets", "models"), ())) <= (
        MAX_ROLE_ASSIGNMENTS_PER_SUBSCRIPTION
    ):
        count *= 2
    department = document["config"]["aks-ray-platform:scheduling"]["departments"][0]
    department["teams"] = [
        {"name": f"t{i}", "quota": {"a100": {"gpu": 1}, "cpu": {"cpu": 0, "memory": 0}}}
        for i in range(count)
    ]
    document["config"]["aks-ray-platform:workloads"]["llm-serve"]["team"] = "t0"
    document["config"]["aks-ray-platform:storage"] = {"enabled": True}
    checked = preflight(write_stack(tmp_path, document), None)
    assert [p.path for p in checked.problems] == [
        "scheduling.departments",
        "cluster.gpuPools[0].maxCount",
    ]
