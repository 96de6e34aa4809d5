"""Common slips on the command line get the command's own usage and a line that names the slip:
an option misspelt (with the option meant), an option another needs (argparse said the
required --stack/--config was missing, or printed the top-level usage)."""

from __future__ import annotations

import pytest

from aksray.cli.usage import EXIT_USAGE
from tests.support.harness import cli

PLAN_USAGE = "usage: aksray plan [-h] (--stack NAME | --config FILE)"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("plan", "--stak", "dev"),
         "aksray plan: error: unrecognized arguments: --stak (did you mean --stack?)"),
        (("plan", "--stack", "dev", "--jsn"),
         "aksray plan: error: unrecognized arguments: --jsn (did you mean --json?)"),
        (("plan", "--stack", "dev", "--bogus=1"),
         "aksray plan: error: unrecognized arguments: --bogus=1"),
        (("plan", "--stack", "dev", "--full-plan", "x.md"),
         "aksray plan: error: --full-plan needs --format markdown (the whole plan of the comment)"),
        (("plan", "--stack", "dev", "--format", "markdown", "--full-plan-link", "u"),
         "aksray plan: error: --full-plan-link needs --full-plan FILE (the file it links to)"),
        (("render", "--stak", "dev", "--out", "o"),
         "aksray render: error: unrecognized arguments: --stak (did you mean --stack?)"),
        (("rehearse", "--stack", "dev", "--scenaro", "all"),
         "aksray rehearse: error: unrecognized arguments: --scenaro (did you mean --scenario?)"),
    ],
)  # fmt: skip
def test_a_slip_is_named_under_the_command_s_usage(args: tuple[str, ...], error: str) -> None:
    run = cli(*args)
    assert run.code == EXIT_USAGE
    lines = run.stderr.splitlines()
    assert lines[0].startswith(f"usage: aksray {args[0]} "), lines[0]
    assert lines[-1] == error


def test_a_missing_source_is_still_the_required_option() -> None:
    run = cli("plan")
    assert run.stderr.splitlines()[0] == PLAN_USAGE
    assert run.stderr.splitlines()[-1] == (
        "aksray plan: error: one of the arguments --stack --config is required"
    )


def test_an_abbreviation_argparse_accepts_is_no_slip() -> None:
    assert cli("plan", "--sta", "dev", "--js").code == 0
