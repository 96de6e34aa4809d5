"""`aksray rehearse` on a stack with `multikueue`: what it refuses before anything starts."""

from __future__ import annotations

from pathlib import Path

from aksray.offline.runner import stack_file
from tests.support.harness import cli


def test_a_multikueue_stack_refuses_a_cluster_of_ones_own(tmp_path: Path) -> None:
    run = cli("rehearse", "--config", stack_file("multiregion"), "--kubeconfig", tmp_path / "k")
    assert run.code == 1, run.output
    assert run.stderr.splitlines() == [
        f"error: --kubeconfig {tmp_path / 'k'}: a stack with `multikueue` is rehearsed on a "
        "manager and worker control planes the rehearsal starts; leave --kubeconfig out"
    ]


def test_a_multikueue_stack_refuses_a_one_cluster_scenario() -> None:
    run = cli("rehearse", "--config", stack_file("multiregion"), "--scenario", "no-capacity")
    assert run.code == 1, run.output
    assert "error: --scenario no-capacity: a stack with `multikueue` plays the `multikueue`" in (
        run.stderr
    )


def test_the_multikueue_scenario_needs_a_multikueue_stack() -> None:
    run = cli("rehearse", "--stack", "dev", "--scenario", "multikueue")
    assert run.code == 1, run.output
    assert "has no `multikueue` section" in run.stderr
