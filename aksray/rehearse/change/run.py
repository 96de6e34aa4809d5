"""`aksray rehearse --since OLD` (and `--upgrade-operators`): one change rehearsal, start to end."""

from __future__ import annotations

from pathlib import Path

from aksray.rehearse.change.play import ChangeRun
from aksray.rehearse.change.states import load_state, steps
from aksray.rehearse.change.upgrade import operator_upgrade
from aksray.rehearse.rig.controlplane import rig_run_dir
from aksray.rehearse.rig.prerequisites import (
    engine_toolchain,
    missing_prerequisites,
    previous_missing,
    previous_versions,
)
from aksray.rehearse.rig.toolchain import ToolchainMissingError
from aksray.rehearse.run import InvalidConfigError, Rehearsal, ScenarioResult, job_timing
from aksray.rehearse.target import KAI, Progress, quiet, target


def rehearse_since(
    config_file: Path,
    name: str,
    since: list[tuple[str, Path]],
    *,
    upgrade: bool = False,
    scheduler: str = KAI,
    progress: Progress = quiet,
) -> ScenarioResult:
    """Apply the oldest of `since` ((label, file) pairs, oldest first), let its workloads run,
    then change the stack to each next one and at last to `config_file`; with `upgrade`, the rig
    starts its operators at the versions the platform shipped before and the first change
    upgrades them."""
    missing = missing_prerequisites(rig=True)
    if upgrade:
        missing += [p for p in [previous_missing()] if p]
    if missing:
        raise ToolchainMissingError("\n".join(missing))
    if not since and not upgrade:
        raise InvalidConfigError(
            ["error: --since: name the stack as deployed (a file or REF:PATH)"]
        )
    engine = engine_toolchain()
    run_dir = rig_run_dir()
    stack = f"rehearse-{name}"
    progress(f"{name}: checking the stacks (the program offline, and the change plans)")
    states = [load_state(label, path, stack, run_dir, f"--since {label}") for label, path in since]
    states.append(load_state(str(config_file), config_file, stack, run_dir))
    if len(states) == 1:  # the operators alone change
        states.append(states[0])
    versions = previous_versions() if upgrade else {}
    first = states[0].settings
    with target(None, run_dir, first, scheduler, progress, versions=versions) as where:
        rehearsal = Rehearsal(
            name, states[0].stack, first, where, engine, run_dir, progress=progress
        )
        if where.dashboard is not None:
            where.dashboard.timing = job_timing(rehearsal.run_times)
        namespaces = tuple(
            sorted({t.namespace for s in states for t in s.settings.scheduling.teams})
        )
        player = (
            operator_upgrade(where.plane, namespaces)
            if upgrade and where.plane is not None
            else None
        )
        return ChangeRun(rehearsal, states, steps(states), player).play()
