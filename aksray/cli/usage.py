"""What `aksray --help` and `aksray --version` say: the exit codes, the examples and the pins.

One table of exit codes for every command: the CLI returns these constants and its help lists
them, so the two cannot drift. Nothing here imports the Pulumi SDKs (`--help` stays fast).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Final

from catalog.project import PROJECT
from catalog.versions import CHART_SETS, RAY_IMAGE

EXIT_OK: Final = 0
EXIT_PROBLEMS: Final = 1
EXIT_USAGE: Final = 2  # argparse's own code for bad arguments
EXIT_INTERNAL: Final = 3
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE: Final = 141  # 128 + SIGPIPE, what a shell reports for a command its reader left

# What each exit code means, per command ("*": every command; "aksray": in short, for all).
EXIT_MEANINGS: Final[dict[str, dict[int, str]]] = {
    "*": {
        EXIT_USAGE: "a usage error: unknown option, missing argument",
        EXIT_INTERNAL: "an internal error (AKSRAY_DEBUG=1 shows its traceback)",
        EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
        EXIT_BROKEN_PIPE: "the reader of the output went away (as in `aksray plan | head`)",
    },
    "aksray": {
        EXIT_OK: "success: a valid plan with no failed check, files written, invariants held",
        EXIT_PROBLEMS: "a configuration error, a failed check or a broken invariant",
    },
    "plan": {
        EXIT_OK: "the configuration is valid and no check failed (warnings do not fail)",
        EXIT_PROBLEMS: "a configuration error or a failed check (one `error: <path>: ...` line "
        "each), with --since a change `pulumi up` would fail or stop halfway through (one "
        "`error: change: ...` line each) or an OLD that cannot be read, or --full-plan FILE "
        "cannot be written",
    },
    "render": {
        EXIT_OK: "every file was written",
        EXIT_PROBLEMS: "a configuration error, or the output folder cannot be written",
    },
    "rehearse": {
        EXIT_OK: "every invariant held",
        EXIT_PROBLEMS: "an invariant broke, or a configuration error",
        EXIT_USAGE: "a usage error, or the rig or the engine is not built (`make rig`, "
        "`make engine`)",
        EXIT_INTERNAL: "the rig failed, or an internal error",
    },
    "verify": {
        EXIT_OK: "the cluster holds what the plan says (notes do not fail)",
        EXIT_PROBLEMS: "a drift (one `drift: ...` line each), or a configuration error",
        EXIT_USAGE: "a usage error, or the cluster cannot be reached with the kubeconfig",
    },
}

EXAMPLES: Final[dict[str, tuple[str, ...]]] = {
    "plan": (
        "aksray plan --stack dev",
        "aksray plan --config path/to/Pulumi.staging.yaml --json",
        "aksray plan --stack prod --format markdown --full-plan full.md > plan.md  # a PR comment",
        "aksray plan --stack prod --since origin/main:stacks/Pulumi.prod.yaml  # the change",
    ),
    "render": ("aksray render --stack dev --out out/dev",),
    "rehearse": (
        "aksray rehearse --stack dev --scenario inference-preempts-training",
        "aksray rehearse --stack prod --scenario all --json",
        "aksray rehearse --stack prod --since origin/main:stacks/Pulumi.prod.yaml  # the change",
        "aksray rehearse --stack dev --upgrade-operators  # from the operators shipped before",
    ),
    "verify": ("aksray verify --stack prod --kubeconfig ~/.kube/config",),
}


def exit_codes(command: str | None) -> dict[int, str]:
    """The exit codes of one command, or of `aksray` as a whole (None)."""
    return dict(sorted({**EXIT_MEANINGS["*"], **EXIT_MEANINGS[command or "aksray"]}.items()))


def epilog(command: str | None) -> str:
    """`Examples:` and `Exit codes:` as the end of a --help text."""
    examples = EXAMPLES[command] if command else tuple(e for v in EXAMPLES.values() for e in v)
    codes = exit_codes(command)
    return "\n".join(
        [
            "examples:",
            *(f"  {line}" for line in examples),
            "",
            "exit codes:",
            *(f"  {code:<4} {meaning}" for code, meaning in sorted(codes.items())),
        ]
    )


def version_text() -> str:
    """`aksray --version`: the package version and every chart version it pins."""
    try:
        own = version(PROJECT)
    except PackageNotFoundError:  # run from a checkout that was never installed
        own = "unknown (not installed)"
    lines = [f"aksray {own} ({PROJECT})"]
    for source, charts in CHART_SETS.items():
        lines.append(f"charts with operators.chartSource: {source}:")
        release = max(len(chart.release) for chart in charts.charts)
        pinned = max(len(chart.version) for chart in charts.charts)
        lines += [
            f"  {chart.release.ljust(release)}  {chart.version.ljust(pinned)}  {chart.repository}"
            for chart in charts.charts
        ]
    lines.append(f"ray image: {RAY_IMAGE}")
    return "\n".join(lines)
