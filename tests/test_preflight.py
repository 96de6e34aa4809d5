"""What `aksray plan` refuses before running the program: the settings' own problems and the
checks that need only the settings."""

from __future__ import annotations

from pathlib import Path

from aksray.preflight import preflight
from aksray.runner import stack_file
from tests.support.harness import write_stack
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
