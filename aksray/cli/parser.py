"""The `aksray` command line: its commands, options and help (aksray/cli/main.py runs them)."""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import Any

from aksray.cli.usage import EXIT_OK, epilog, version_text

PLAN_FORMATS = ("text", "json", "markdown")


class HelpFormat(argparse.HelpFormatter):
    """Wraps descriptions to the terminal, keeps the epilog's examples and codes as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class _Version(argparse.Action):
    """`--version`: its lines as written (argparse's own version action re-wraps them)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(version_text())
        parser.exit(EXIT_OK)


class CommandParser(argparse.ArgumentParser):
    """A command's parser: an option it does not know is the first error it reports, under the
    command's own usage and with the option meant. (argparse leaves unknown options to the
    top-level parser, which prints its own usage, and first reports a required option missing:
    `aksray plan --stak dev` said that --stack or --config is required.)"""

    def parse_known_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        unknown = [arg for arg in _options(args or []) if not self._known(arg)]
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}{self._meant(unknown[0])}")
        return super().parse_known_args(args, namespace)

    def _known(self, arg: str) -> bool:
        option = arg.split("=", 1)[0]
        known = self._option_string_actions
        return option in known or any(o.startswith(option) for o in known if o.startswith("--"))

    def _meant(self, arg: str) -> str:
        options = [o for o in self._option_string_actions if o.startswith("--")]
        close = difflib.get_close_matches(arg.split("=", 1)[0], options, n=1, cutoff=0.6)
        return f" (did you mean {close[0]}?)" if close else ""


def _options(args: list[str]) -> list[str]:
    """The arguments that are options (`--name`, `--name=value`), up to a bare `--`."""
    found = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            found.append(arg)
    return found


def _add_source(command: argparse.ArgumentParser) -> None:
    source = command.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--stack", metavar="NAME", help="a stack of this project: stacks/Pulumi.NAME.yaml"
    )
    source.add_argument(
        "--config",
        metavar="FILE",
        type=Path,
        help="a stack file in the Pulumi.<stack>.yaml format, from any path",
    )


def _add_plan(commands: Any) -> None:
    plan = commands.add_parser(
        "plan",
        help="show every resource `pulumi up` would create, a summary, and the checks",
        description="Run the stack's program offline and print the resource tree `pulumi up` "
        "would create, the stack outputs, a summary of pools, queues, workloads and the deploy "
        "critical path, then the admission and capacity checks. Errors and warnings go to "
        "stderr, one line each.",
        epilog=epilog("plan"),
        formatter_class=HelpFormat,
    )
    _add_source(plan)
    plan.add_argument(
        "--format",
        choices=PLAN_FORMATS,
        default="text",
        help="text (default); json: one JSON document; markdown: a pull-request comment with "
        "tables and Mermaid diagrams",
    )
    plan.add_argument(
        "--json", dest="format", action="store_const", const="json", help="--format json"
    )
    plan.add_argument(
        "--since",
        metavar="OLD",
        help="also show the change from the stack as deployed: OLD is its stack file, or "
        "REF:PATH read from git (e.g. origin/main:stacks/Pulumi.prod.yaml); each resource "
        "created, updated, replaced (and what forces it) or deleted, then what that does to a "
        "running platform. Exit 1 when `pulumi up` would fail or stop halfway",
    )
    plan.add_argument(
        "--full-plan",
        metavar="FILE",
        type=Path,
        help="with --format markdown: also write the whole plan to FILE (every team, every "
        "warning, every table; every diagram Mermaid draws). The comment on stdout stays within "
        "the 65,536 characters of a pull-request comment: past that it lists the queues per "
        "department, cuts tables and warnings, says what it left out and links to FILE",
    )
    plan.add_argument(
        "--full-plan-link",
        metavar="URL",
        help="with --full-plan: where readers of the comment find FILE (e.g. the CI run that "
        "keeps it as an artifact); the comment's link goes there instead of to FILE's path",
    )


def check_plan_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Options one needs another for: reported under `aksray plan`'s usage."""
    if args.command != "plan":
        return
    plan = _command_parsers(parser)["plan"]
    if args.full_plan is not None and args.format != "markdown":
        plan.error("--full-plan needs --format markdown (the whole plan of the comment)")
    if args.full_plan_link is not None and args.full_plan is None:
        plan.error("--full-plan-link needs --full-plan FILE (the file it links to)")


def _command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def _add_render(commands: Any) -> None:
    render = commands.add_parser(
        "render",
        help="write every Kubernetes object and resources.json to a directory",
        description="Write OUT/kubernetes/<kind>-<namespace>-<name>.yaml for every Kubernetes "
        "object (Helm releases as their chart, version and values) and OUT/resources.json for "
        "every resource, offline.",
        epilog=epilog("render"),
        formatter_class=HelpFormat,
    )
    _add_source(render)
    render.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        required=True,
        help="output directory (created if missing)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aksray",
        description="Plan and render an aks-ray-platform stack offline: the same Pulumi program "
        "`pulumi up` runs, under Pulumi's mock runtime, with no cloud credentials; rehearse it "
        "on real Kueue and KubeRay controllers. `aksray COMMAND --help` says more.",
        epilog=epilog(None),
        formatter_class=HelpFormat,
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="print the version and the pinned chart versions, then exit",
    )
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=CommandParser
    )
    _add_plan(commands)
    _add_render(commands)
    from aksray.cli.rehearse import add_parser as add_rehearse

    add_rehearse(commands, _add_source, epilog=epilog("rehearse"), formatter_class=HelpFormat)
    return parser
