"""`aksray rehearse --since` and `--upgrade-operators`: what they refuse before anything starts."""

from __future__ import annotations

from pathlib import Path

from aksray.offline.runner import PROJECT_ROOT, stack_file
from tests.support.harness import cli

DAY2 = PROJECT_ROOT / "tests" / "stacks" / "day2"
OLD = DAY2 / "0-base.yaml"
NEW = DAY2 / "1-team-added.yaml"


def test_a_change_is_rehearsed_on_a_rig_not_on_ones_own_cluster(tmp_path: Path) -> None:
    run = cli("rehearse", "--config", NEW, "--since", OLD, "--kubeconfig", tmp_path / "k")
    assert run.code == 1, run.output
    assert run.stderr.splitlines() == [
        f"error: --kubeconfig {tmp_path / 'k'}: a change is rehearsed on a rig the rehearsal "
        "starts (it changes nodes and operators as AKS would); leave --kubeconfig out"
    ]


def test_a_change_plays_no_scenario() -> None:
    run = cli("rehearse", "--config", NEW, "--upgrade-operators", "--scenario", "no-capacity")
    assert run.code == 1, run.output
    assert run.stderr.startswith("error: --scenario no-capacity: --since and --upgrade-operators")


def test_an_old_stack_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "gone.yaml"
    run = cli("rehearse", "--config", NEW, "--since", missing)
    assert run.code == 1, run.output
    assert run.stderr.splitlines() == [
        f"error: --since {missing}: no such file; name the stack file as deployed, or REF:PATH "
        "to read it from git (e.g. origin/main:stacks/Pulumi.prod.yaml)"
    ]


def test_a_bad_ref_is_one_line() -> None:
    run = cli("rehearse", "--config", NEW, "--since", "no-such-ref-x:stacks/Pulumi.dev.yaml")
    assert run.code == 1, run.output
    assert len(run.stderr.splitlines()) == 1
    assert run.stderr.startswith("error: --since no-such-ref-x:stacks/Pulumi.dev.yaml: git ")


def test_a_multikueue_stack_has_no_change_rehearsal() -> None:
    run = cli(
        "rehearse", "--config", stack_file("multiregion"), "--since", stack_file("multiregion")
    )
    assert run.code == 1, run.output
    assert "error: --since: a change to a stack with `multikueue` is not rehearsed" in run.stderr
