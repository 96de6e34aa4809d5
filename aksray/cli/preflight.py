"""What `aksray plan` and `aksray render` refuse before running the program at all.

The settings are validated exactly as the program validates them (settings/load.py), then the
checks that need nothing but the settings run (aksray/checks SETTINGS_CHECKS). A stack refused
here is never built: however many teams it has, refusing it takes the time and memory of
reading it, not of registering its resources.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aksray.offline.runner import PROJECT_FILE, stack_name_for
from aksray.plan.checks.multikueue import run_worker_settings_checks
from aksray.plan.checks.run import run_settings_checks
from aksray.stackfile.reader import StackConfig, load_stack_config
from settings.errors import Problem, SettingsError
from settings.load import settings_from_config
from settings.model import Settings


@dataclass(frozen=True)
class Preflight:
    stack: str
    config: StackConfig  # for run_program, so the file is read once
    problems: tuple[Problem, ...]  # empty: run the program


def preflight(config_file: Path, stack: str | None) -> Preflight:
    """Raises `StackFileError` for a file that is not Pulumi configuration."""
    name = stack or stack_name_for(config_file)
    config = load_stack_config(config_file, project_file=PROJECT_FILE)
    try:
        settings = settings_from_config(config.values, config.secret_keys, stack=name)
    except SettingsError as exc:
        if exc.settings is None:
            return Preflight(name, config, exc.problems)
        # Problems that judge values which parsed: the settings checks still run, so every
        # problem is reported in one run (10,000 teams: the role-assignment limit and the quota).
        return Preflight(name, config, exc.problems + _settings_checks(exc.settings))
    return Preflight(name, config, _settings_checks(settings))


def _settings_checks(settings: Settings) -> tuple[Problem, ...]:
    problems = run_settings_checks(settings).errors
    if settings.multikueue is not None:
        problems += run_worker_settings_checks(settings).errors
    return tuple(problems)
